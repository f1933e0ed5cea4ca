"""Writes tiny random-weight models in the Hugging Face layouts of the Llama
family, which tests/models/test_hf_llama.cpp loads and checks against this
script's own PyTorch forward pass (make_modern_gpt_fixtures.py's, with the
semantics of transformers' LlamaForCausalLM and its relatives):

    llama    LlamaForCausalLM   BF16, two shards + model.safetensors.index.json,
                                GQA, llama3 rope_scaling, untied head, eos list
    mistral  MistralForCausalLM F16, one file, sliding_window shorter than the
                                context (tinygpt shortens the context to it)
    qwen2    Qwen2ForCausalLM   BF16, one file, q/k/v biases, tied embeddings
    qwen3    Qwen3ForCausalLM   BF16, two shards + index, QK-norm, head_dim != C/NH,
                                an F32 norm among BF16 matrices

Each directory also holds a small tokenizer.json of the family's kind, with
the real files' normalizers, pre-tokenizers and decoders and a vocabulary of
about 300 tokens learned here (byte-level BPE for Llama 3 and Qwen, the
SentencePiece-style BPE with byte fallback for Mistral), and a
tokenizer_config.json with a chat template written for the fixture in the
family's format.

Each directory holds config.json, the weights, and expected.json:

    ids        a (1, T) sequence; targets = ids shifted by one
    loss       mean cross-entropy of the float32 forward of the stored weights
               (BF16/F16 widened exactly to float32, as tinygpt loads them)
    prompt, greedy   a prompt and its 8-token greedy continuation (argmax,
               full recomputation each step)
    text_prompt, text_ids, text_greedy, text_output
               a text prompt, its ids from Hugging Face's Rust tokenizers
               (with special tokens, as tokenizer(text) gives them), the greedy
               continuation's ids, and the whole text decoded (skipping special
               tokens): what `tinygpt sample --greedy` prints

No weights of a real model: random ones in the real names, shapes and dtypes.
Run with Debian's python3 (torch + numpy), from the project root, after
`bash scripts/setup.sh --test` (which puts the Rust tokenizers' Node binding in
build/npm):

    /usr/bin/python3 tests/reference/make_hf_llama_fixtures.py tests/fixtures/hf_llama
"""
import json
import os
import subprocess
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_modern_gpt_fixtures as modern  # noqa: E402
import hf_fixture_tokenizers  # noqa: E402
import safetensors_io  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NODE_PATH = os.environ.get("NODE_PATH", os.path.join(ROOT, "build", "npm", "node_modules"))
CORPUS = open(os.path.join(ROOT, "..", "shared", "data", "tinyshakespeare.txt"), encoding="utf-8").read()[:20000]
TEXT_PROMPT = "ROMEO: What light through yonder window"

VOCAB, CHANNELS, LAYERS, CONTEXT, TIME = 320, 32, 2, 128, 24

FAMILIES = {
    "llama": dict(architecture="LlamaForCausalLM", model_type="llama", dtype="BF16", shards=2, seed=3001, tokenizer="llama3",
                  n_head=4, n_kv_head=2, head_dim=8, mlp_hidden=64, qk_norm=False, bias="none",
                  tie_embeddings=False, rope_base=500000.0, rope_scaling="llama3:8,1,4,64", norm_eps=1e-5,
                  extra={"rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                          "high_freq_factor": 4.0, "original_max_position_embeddings": 64},
                         "bos_token_id": 300, "eos_token_id": [301, 304], "attention_bias": False, "mlp_bias": False,
                         "pretraining_tp": 1}),
    "mistral": dict(architecture="MistralForCausalLM", model_type="mistral", dtype="F16", shards=1, seed=3002,
                    tokenizer="sentencepiece",
                    n_head=4, n_kv_head=1, head_dim=8, mlp_hidden=80, qk_norm=False, bias="none",
                    tie_embeddings=False, rope_base=10000.0, rope_scaling="none", norm_eps=1e-5,
                    extra={"sliding_window": 96, "bos_token_id": 1, "eos_token_id": 2}),
    "qwen2": dict(architecture="Qwen2ForCausalLM", model_type="qwen2", dtype="BF16", shards=1, seed=3003, tokenizer="qwen",
                  n_head=4, n_kv_head=2, head_dim=8, mlp_hidden=64, qk_norm=False, bias="qkv",
                  tie_embeddings=True, rope_base=1000000.0, rope_scaling="none", norm_eps=1e-6,
                  extra={"use_sliding_window": False, "sliding_window": 64, "max_window_layers": 2,
                         "bos_token_id": 300, "eos_token_id": 302}),
    "qwen3": dict(architecture="Qwen3ForCausalLM", model_type="qwen3", dtype="BF16", shards=2, seed=3004, tokenizer="qwen",
                  n_head=4, n_kv_head=2, head_dim=16, mlp_hidden=48, qk_norm=True, bias="none",
                  tie_embeddings=False, rope_base=1000000.0, rope_scaling="none", norm_eps=1e-6,
                  extra={"attention_bias": False, "use_sliding_window": False, "bos_token_id": 300,
                         "eos_token_id": 302}),
}

TORCH_DTYPE = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32}


def hf_tensors(params, c):
    """tinygpt's parameters split and renamed as Hugging Face stores them (models/hf_llama.cpp's table)."""
    nh, kvh, hd, hidden = c["n_head"], c["n_kv_head"], c["head_dim"], c["mlp_hidden"]
    out = {"model.embed_tokens.weight": params["wte.weight"]}
    for layer in range(LAYERS):
        p, h = f"blocks.{layer}.", f"model.layers.{layer}."
        out[h + "input_layernorm.weight"] = params[p + "ln_1.weight"]
        for kind in ("weight", "bias"):
            fused = params.get(p + "attn.qkv." + kind)
            if fused is not None:
                q, k, v = fused.split([nh * hd, kvh * hd, kvh * hd], dim=0)
                out[h + "self_attn.q_proj." + kind], out[h + "self_attn.k_proj." + kind] = q, k
                out[h + "self_attn.v_proj." + kind] = v
        if c["qk_norm"]:
            out[h + "self_attn.q_norm.weight"] = params[p + "attn.q_norm.weight"]
            out[h + "self_attn.k_norm.weight"] = params[p + "attn.k_norm.weight"]
        out[h + "self_attn.o_proj.weight"] = params[p + "attn.c_proj.weight"]
        out[h + "post_attention_layernorm.weight"] = params[p + "ln_2.weight"]
        gate, up = params[p + "mlp.c_fc.weight"].split([hidden, hidden], dim=0)
        out[h + "mlp.gate_proj.weight"], out[h + "mlp.up_proj.weight"] = gate, up
        out[h + "mlp.down_proj.weight"] = params[p + "mlp.c_proj.weight"]
    out["model.norm.weight"] = params["ln_f.weight"]
    if not c["tie_embeddings"]:
        out["lm_head.weight"] = params["lm_head.weight"]
    return out


def write_safetensors(path, tensors):
    """tensors: [(name, torch tensor)] in BF16, F16 or F32, with save_pretrained's metadata."""
    def stored(tensor):
        if tensor.dtype == torch.bfloat16:
            return ("BF16", tuple(tensor.shape), tensor.contiguous().view(torch.int16).numpy().tobytes())
        return tensor.contiguous().numpy()
    safetensors_io.write(path, [(name, stored(tensor)) for name, tensor in tensors], {"format": "pt"})


def config_json(c):
    config = {"architectures": [c["architecture"]], "model_type": c["model_type"], "vocab_size": VOCAB,
              "hidden_size": CHANNELS, "intermediate_size": c["mlp_hidden"], "num_hidden_layers": LAYERS,
              "num_attention_heads": c["n_head"], "num_key_value_heads": c["n_kv_head"],
              "max_position_embeddings": CONTEXT, "rms_norm_eps": c["norm_eps"], "rope_theta": c["rope_base"],
              "hidden_act": "silu", "tie_word_embeddings": c["tie_embeddings"], "initializer_range": 0.02,
              "attention_dropout": 0.0, "use_cache": True, "rope_scaling": None,
              "torch_dtype": {"BF16": "bfloat16", "F16": "float16"}[c["dtype"]], "transformers_version": "4.51.0"}
    if c["head_dim"] * c["n_head"] != CHANNELS or c["model_type"] == "qwen3":
        config["head_dim"] = c["head_dim"]
    config.update(c["extra"])
    return config


def greedy(params, c, prompt, steps):
    """The continuation, and the smallest gap between the best and second-best logit on the way (a gap
    far above float32's rounding means any exact implementation picks the same tokens)."""
    ids, smallest_gap = list(prompt), float("inf")
    with torch.no_grad():
        for _ in range(steps):
            logits = modern.forward(params, torch.tensor([ids]), c)[0, -1]
            top = torch.topk(logits, 2).values
            smallest_gap = min(smallest_gap, float(top[0] - top[1]))
            ids.append(int(logits.argmax()))
    return ids[len(prompt):], smallest_gap


def rust_tokenizers(tokenizer_json, action, argument):
    """Hugging Face's Rust tokenizers through their Node binding (hf_tokenize.cjs)."""
    result = subprocess.run(["node", os.path.join(HERE, "hf_tokenize.cjs"), tokenizer_json, action, argument],
                            env=dict(os.environ, NODE_PATH=NODE_PATH), capture_output=True, text=True, check=True)
    return json.loads(result.stdout)


def make_tokenizer(c):
    if c["tokenizer"] == "sentencepiece":
        return hf_fixture_tokenizers.sentencepiece(CORPUS)
    return hf_fixture_tokenizers.byte_level(c["tokenizer"], CORPUS)


def tokenizer_size(c):
    tokenizer, _ = make_tokenizer(c)
    return max(list(tokenizer["model"]["vocab"].values()) + [t["id"] for t in tokenizer["added_tokens"]]) + 1


def write_tokenizer(c, directory):
    tokenizer, config = make_tokenizer(c)
    with open(os.path.join(directory, "tokenizer.json"), "w", encoding="utf-8") as f:
        json.dump(tokenizer, f, ensure_ascii=False, indent=1)
    with open(os.path.join(directory, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=1)
    return os.path.join(directory, "tokenizer.json")


def make_family(name, directory):
    c = dict(FAMILIES[name], norm_weight=True, mlp="swiglu")
    modern.VOCAB, modern.CHANNELS, modern.LAYERS = VOCAB, CHANNELS, LAYERS
    generator = torch.Generator().manual_seed(c["seed"])
    params = modern.random_parameters(c, generator)
    head = params["wte.weight"] if c["tie_embeddings"] else params["lm_head.weight"]
    with torch.no_grad():
        # Rows past the tokenizer's last id are padding, as in Qwen's published tables (151,936 rows for
        # 151,669 tokens): a trained model never picks them, so the fixture's head gives them nothing.
        head[tokenizer_size(c):] = 0
        if c["tokenizer"] == "sentencepiece":
            # Random weights pick byte-fallback tokens (256 of the 320 rows) most of the time, and bytes that
            # are not UTF-8 print as Hugging Face's U+FFFD but as themselves on a terminal: shrink those rows
            # so the greedy text is made of words.
            head[3:259] *= 0.05
    stored_dtype = TORCH_DTYPE[c["dtype"]]
    hf = hf_tensors({k: v.detach() for k, v in params.items()}, c)
    # Qwen3's fixture keeps its final norm in F32 among BF16 matrices: files may mix dtypes.
    stored = {k: (v.float() if (name == "qwen3" and k == "model.norm.weight") else v.to(stored_dtype))
              for k, v in hf.items()}
    # The reference computes with what the files hold, widened to float32.
    widened = {k: v.float() for k, v in stored.items()}
    back = dict(params)
    back["wte.weight"] = widened["model.embed_tokens.weight"]
    for layer in range(LAYERS):
        p, h = f"blocks.{layer}.", f"model.layers.{layer}."
        back[p + "ln_1.weight"] = widened[h + "input_layernorm.weight"]
        back[p + "ln_2.weight"] = widened[h + "post_attention_layernorm.weight"]
        for kind in ("weight", "bias"):
            if h + "self_attn.q_proj." + kind in widened:
                back[p + "attn.qkv." + kind] = torch.cat([widened[h + f"self_attn.{x}_proj." + kind] for x in "qkv"])
        if c["qk_norm"]:
            back[p + "attn.q_norm.weight"] = widened[h + "self_attn.q_norm.weight"]
            back[p + "attn.k_norm.weight"] = widened[h + "self_attn.k_norm.weight"]
        back[p + "attn.c_proj.weight"] = widened[h + "self_attn.o_proj.weight"]
        back[p + "mlp.c_fc.weight"] = torch.cat([widened[h + "mlp.gate_proj.weight"], widened[h + "mlp.up_proj.weight"]])
        back[p + "mlp.c_proj.weight"] = widened[h + "mlp.down_proj.weight"]
    back["ln_f.weight"] = widened["model.norm.weight"]
    if not c["tie_embeddings"]:
        back["lm_head.weight"] = widened["lm_head.weight"]

    ids = torch.randint(0, VOCAB, (1, TIME + 1), generator=generator)
    with torch.no_grad():
        logits = modern.forward(back, ids[:, :-1], c)
        loss = F.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
    prompt = ids[0, :6].tolist()
    continuation, gap = greedy(back, c, prompt, 8)
    assert gap > 1e-4, f"{name}: greedy decoding has a near tie ({gap}); pick another seed"

    os.makedirs(directory, exist_ok=True)
    for old in os.listdir(directory):
        os.remove(os.path.join(directory, old))
    names = list(stored)
    if c["shards"] == 1:
        write_safetensors(os.path.join(directory, "model.safetensors"), [(n, stored[n]) for n in names])
    else:
        count = c["shards"]
        weight_map, total = {}, 0
        for shard in range(count):
            file = f"model-{shard + 1:05d}-of-{count:05d}.safetensors"
            chunk = names[shard::count]
            write_safetensors(os.path.join(directory, file), [(n, stored[n]) for n in chunk])
            for n in chunk:
                weight_map[n] = file
                total += stored[n].numel() * stored[n].element_size()
        with open(os.path.join(directory, "model.safetensors.index.json"), "w") as f:
            json.dump({"metadata": {"total_size": total}, "weight_map": dict(sorted(weight_map.items()))}, f, indent=2)
    with open(os.path.join(directory, "config.json"), "w") as f:
        json.dump(config_json(c), f, indent=2)
    tokenizer_json = write_tokenizer(c, directory)
    text_ids = rust_tokenizers(tokenizer_json, "encode", TEXT_PROMPT)
    text_greedy, text_gap = greedy(back, c, text_ids, 8)
    assert text_gap > 1e-4, f"{name}: greedy decoding of the text prompt has a near tie ({text_gap})"
    assert max(text_greedy) < tokenizer_size(c), f"{name}: the greedy text picks a padding row"
    # Generation stops at config.json's eos ids: the text is what comes before the first.
    eos = c["extra"]["eos_token_id"]
    eos = eos if isinstance(eos, list) else [eos]
    printed = text_greedy[:next((i for i, t in enumerate(text_greedy) if t in eos), len(text_greedy))]
    text_output = rust_tokenizers(tokenizer_json, "decode", json.dumps(text_ids + printed))
    expected = {"ids": ids[0].tolist(), "loss": loss.item(), "prompt": prompt, "greedy": continuation,
                "text_prompt": TEXT_PROMPT, "text_ids": text_ids, "text_greedy": text_greedy,
                "text_output": text_output,
                "producer": "tests/reference/make_hf_llama_fixtures.py", "torch": torch.__version__}
    with open(os.path.join(directory, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
    print(f"{directory}: {c['architecture']}, loss {loss.item():.6f}, greedy {continuation} (gap {gap:.2e})")


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    torch.set_num_threads(1)
    for name in FAMILIES:
        make_family(name, os.path.join(sys.argv[1], name))


if __name__ == "__main__":
    main()
