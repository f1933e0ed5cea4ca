"""Writes tests/fixtures/lora/{gpt2,llama}/: a LoRA adapter in Hugging Face PEFT's
format for each of two committed base fixtures, and what PyTorch computes with
base + adapter. The bases are read, never written:

    gpt2   tests/fixtures/hf_gpt2/          GPT2LMHeadModel (Conv1D layers)
    llama  tests/fixtures/hf_llama/llama/   LlamaForCausalLM (GQA, BF16 in two shards)

    /usr/bin/python3 tests/reference/make_lora_fixtures.py

Neither `transformers` nor `peft` is available here: the forwards are the ones
the bases were made with (make_hf_gpt2_fixture.forward and
make_modern_gpt_fixtures.forward, imported), and the adapter enters them as a
weight object (LoraWeight below) that computes PEFT's unmerged LoRA layer
wherever the forward applies that weight:

    y = base(x) + ((x A^T) B^T) * scale,   scale = lora_alpha / r

A (r, in) and B (out, r), whatever the base layer's layout; dropout is 0 (eval).

Each directory holds:
  adapter_model.safetensors  float32, metadata {"format": "pt"}, for each adapted
                             module base_model.model.<module path>.lora_A.weight
                             (r, in) and .lora_B.weight (out, r). Both random and
                             nonzero (PEFT initialises B to 0; a trained adapter's
                             is not, and a zero B would check nothing).
  adapter_config.json        LoraConfig as PEFT's save_pretrained writes it
                             (indent 2, sorted keys)
  expected.json
      ids           the base fixture's sequence (hf_gpt2's prompt_ids,
                    hf_llama/llama's ids); inputs = ids[:-1], targets = ids[1:]
      loss_base     mean next-token cross-entropy without the adapter: equals
                    the base fixture's recorded loss (checked here)
      loss          the same with the adapter
      logits_position, logit_columns, logits_with_adapter
                    logits at the last input position for 16 columns (the
                    first and last ids among them), and logsumexp_with_adapter
                    of that whole row (Llama's last column, 319, is a padding
                    row whose head row is zero: its logit is 0 either way)
      merged_check  max over positions of max |unmerged - merged| / max |unmerged|
                    per row of the logits, both float32, merged = the base
                    weights with scale * B A added (transposed for Conv1D):
                    float32 rounding only, about 1e-6 (in float64 the two
                    agree to 1e-15)
      r, lora_alpha, scale, reference_dtype

The references follow their base scripts: GPT-2 in float64 from the float32
weights (float32 checked to agree), Llama in float32 from the BF16 weights
widened exactly.

Targets: GPT-2 c_attn, c_proj (attention's and the MLP's: PEFT matches module
names by suffix) and c_fc, r 4, alpha 8, fan_in_fan_out (Conv1D stores W as
(in, out)). Llama q_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, r 4,
alpha 16: k_proj is left out on purpose, so that a loader which fuses q, k, v
into one projection must leave the k rows' block alone.
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_hf_gpt2_fixture as gpt2  # noqa: E402
import make_hf_llama_fixtures as hf_llama  # noqa: E402
import make_modern_gpt_fixtures as modern  # noqa: E402
import safetensors_io  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
OUT_DIR = os.path.join(ROOT, "tests", "fixtures", "lora")

# A and B ~ N(0, 0.1^2): scale * B A is then as large as the base weights or larger (Llama's are N(0, 0.02^2)),
# so a block applied to the wrong rows, or not at all, changes the logits by far more than rounding.
ADAPTER_STD = 0.1
LOGIT_COLUMNS = 16

FAMILIES = {
    "gpt2": dict(base="tests/fixtures/hf_gpt2", r=4, lora_alpha=8, seed=4001, fan_in_fan_out=True,
                 target_modules=["c_attn", "c_proj", "c_fc"]),
    "llama": dict(base="tests/fixtures/hf_llama/llama", r=4, lora_alpha=16, seed=4002, fan_in_fan_out=False,
                  target_modules=["q_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]),
}


# ------------------------------------------------------------ the adapted weight

class LoraWeight:
    """A base weight with LoRA adapters on row blocks of its output, applied unmerged as PEFT's LoraLayer does.

    blocks: [(rows, (A (r, in), B (rows, r)) or None)] in output order, one per Hugging Face module fused
    into this weight (q | k | v, gate | up), None for a module left out (its rows get nothing added).
    The imported forwards apply a weight as F.linear(x, W, b) (Linear, W (out, in)) or x @ W (Conv1D,
    W (in, out)); torch hands either call to __torch_function__ when W is this object, so they run unchanged.
    """

    def __init__(self, base, blocks, scale, fan_in_fan_out):
        out_features = base.shape[1] if fan_in_fan_out else base.shape[0]
        assert sum(rows for rows, _ in blocks) == out_features, "the blocks must cover the output rows"
        self.base, self.blocks, self.scale, self.fan_in_fan_out = base, blocks, scale, fan_in_fan_out

    def delta(self, x):
        """x (..., in) -> (..., out): the adapters' outputs, zeros for a block left out."""
        parts = []
        for rows, adapter in self.blocks:
            if adapter is None:
                parts.append(x.new_zeros(*x.shape[:-1], rows))
            else:
                A, B = adapter
                parts.append(((x @ A.T) @ B.T) * self.scale)  # PEFT: lora_B(lora_A(x)) * scaling
        return torch.cat(parts, dim=-1)

    def merged(self):
        """The base weight plus scale * B A for each adapted block, in the base's layout."""
        in_features = self.base.shape[0] if self.fan_in_fan_out else self.base.shape[1]
        delta = torch.cat([(adapter[1] @ adapter[0]) * self.scale if adapter is not None
                           else self.base.new_zeros(rows, in_features) for rows, adapter in self.blocks])  # (out, in)
        return self.base + (delta.T if self.fan_in_fan_out else delta)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func is F.linear:
            x, weight = args[0], args[1]
            bias = args[2] if len(args) > 2 else kwargs.get("bias")
            assert not weight.fan_in_fan_out, "F.linear applied to a Conv1D weight"
            return F.linear(x, weight.base, bias) + weight.delta(x)
        if func in (torch.Tensor.matmul, torch.Tensor.__matmul__, torch.matmul):
            x, weight = args
            assert weight.fan_in_fan_out, "x @ W applied to a Linear weight"
            return x @ weight.base + weight.delta(x)
        raise TypeError(f"LoraWeight: {func} is not a way the forwards apply a weight")


def random_adapter(shapes, r, generator):
    """shapes: {module path: (out, in)} in model order -> {module path: (A (r, in), B (out, r))}, float32."""
    adapter = {}
    for path, (out_features, in_features) in shapes.items():
        A = ADAPTER_STD * torch.randn(r, in_features, generator=generator)
        B = ADAPTER_STD * torch.randn(out_features, r, generator=generator)
        adapter[path] = (A, B)
    return adapter


def targeted(path, target_modules):
    """PEFT's rule for a list of target names: the module path ends with one of them."""
    return any(path == name or path.endswith("." + name) for name in target_modules)


# ------------------------------------------------------------ GPT-2

def gpt2_weights(base, adapter, scale, dtype, merge):
    """base: the forward's names (no "transformer.") -> its weights dict in `dtype`, the adapted ones as
    LoraWeight (merge=False) or with the adapter added in (merge=True)."""
    weights = {}
    for name, tensor in base.items():
        path = "transformer." + name[:-len(".weight")]
        if name.endswith(".weight") and path in adapter:
            A, B = (t.to(dtype) for t in adapter[path])
            lora = LoraWeight(tensor.to(dtype), [(tensor.shape[1], (A, B))], scale, fan_in_fan_out=True)
            weights[name] = lora.merged() if merge else lora
        else:
            weights[name] = tensor.to(dtype)
    return weights


def make_gpt2(c):
    directory = os.path.join(ROOT, c["base"])
    stored, _ = safetensors_io.read(os.path.join(directory, "model.safetensors"))
    assert all(name.startswith("transformer.") for name in stored), "GPT2LMHeadModel's names start with transformer."
    base = {name[len("transformer."):]: torch.from_numpy(array) for name, array in stored.items()}
    with open(os.path.join(directory, "expected.json")) as f:
        recorded = json.load(f)
    ids = recorded["prompt_ids"]

    # Conv1D: the stored weight is (in, out); PEFT's in_features, out_features are its shape in that order.
    shapes = {"transformer." + name[:-len(".weight")]: (tensor.shape[1], tensor.shape[0])
              for name, tensor in base.items()
              if tensor.dim() == 2 and targeted(name[:-len(".weight")], c["target_modules"])}
    adapter = random_adapter(shapes, c["r"], torch.Generator().manual_seed(c["seed"]))
    scale = c["lora_alpha"] / c["r"]

    def logits(dtype, with_adapter=True, merge=False):
        weights = gpt2_weights(base, adapter if with_adapter else {}, scale, dtype, merge)
        with torch.no_grad():
            return gpt2.forward(weights, ids[:-1])  # (T, V)

    return dict(ids=ids, recorded_loss=recorded["loss"], adapter=adapter, logits=logits,
                reference_dtype=torch.float64, base_name=c["base"])


# ------------------------------------------------------------ Llama

def read_hf(directory):
    """All tensors of a Hugging Face checkpoint, one file or shards with an index; BF16 widened to float32."""
    index = os.path.join(directory, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = ["model.safetensors"]
    tensors = {}
    for file in files:
        arrays, _ = safetensors_io.read(os.path.join(directory, file))
        tensors.update({name: torch.from_numpy(array) for name, array in arrays.items()})
    return tensors


def llama_parameters(hf, c, adapter, scale, merge):
    """Hugging Face's tensors -> make_modern_gpt_fixtures.forward's parameters (q | k | v and gate | up fused,
    as in make_hf_llama_fixtures.py), each projection a LoraWeight over its modules' blocks."""
    used = set()

    def take(name):
        used.add(name)
        return hf[name]

    def projection(paths):
        base = torch.cat([take(path + ".weight") for path in paths])  # (out, in)
        lora = LoraWeight(base, [(hf[path + ".weight"].shape[0], adapter.get(path)) for path in paths], scale,
                          fan_in_fan_out=False)
        return lora.merged() if merge else lora

    params = {"wte.weight": take("model.embed_tokens.weight"), "ln_f.weight": take("model.norm.weight")}
    if not c["tie_embeddings"]:
        params["lm_head.weight"] = take("lm_head.weight")
    for layer in range(hf_llama.LAYERS):
        p, h = f"blocks.{layer}.", f"model.layers.{layer}."
        params[p + "ln_1.weight"] = take(h + "input_layernorm.weight")
        params[p + "ln_2.weight"] = take(h + "post_attention_layernorm.weight")
        params[p + "attn.qkv.weight"] = projection([h + f"self_attn.{x}_proj" for x in "qkv"])
        params[p + "attn.c_proj.weight"] = projection([h + "self_attn.o_proj"])
        params[p + "mlp.c_fc.weight"] = projection([h + "mlp.gate_proj", h + "mlp.up_proj"])
        params[p + "mlp.c_proj.weight"] = projection([h + "mlp.down_proj"])
    assert used == set(hf), f"tensors the forward does not use: {sorted(set(hf) - used)}"
    return params


def make_llama(c):
    directory = os.path.join(ROOT, c["base"])
    family = dict(hf_llama.FAMILIES["llama"], norm_weight=True, mlp="swiglu")  # as make_hf_llama_fixtures.make_family
    assert family["bias"] == "none" and not family["qk_norm"], "this script maps a Llama without biases or QK-norm"
    modern.VOCAB, modern.CHANNELS, modern.LAYERS = hf_llama.VOCAB, hf_llama.CHANNELS, hf_llama.LAYERS
    hf = read_hf(directory)
    with open(os.path.join(directory, "expected.json")) as f:
        recorded = json.load(f)
    ids = recorded["ids"]

    shapes = {name[:-len(".weight")]: tuple(tensor.shape) for name, tensor in hf.items()
              if name.startswith("model.layers.") and tensor.dim() == 2
              and targeted(name[:-len(".weight")], c["target_modules"])}
    layer_of = lambda path: int(path.split(".")[2])  # noqa: E731
    shapes = dict(sorted(shapes.items(), key=lambda item: (layer_of(item[0]), item[0])))  # model order by layer
    adapter = random_adapter(shapes, c["r"], torch.Generator().manual_seed(c["seed"]))
    scale = c["lora_alpha"] / c["r"]

    def logits(dtype, with_adapter=True, merge=False):
        assert dtype == torch.float32, "the Llama fixture's reference is float32, as its base's"
        params = llama_parameters(hf, family, adapter if with_adapter else {}, scale, merge)
        with torch.no_grad():
            return modern.forward(params, torch.tensor([ids[:-1]]), family)[0]  # (T, V)

    # The left-out module's rows of the fused projection are the base's, bit for bit, once merged.
    merged = llama_parameters(hf, family, adapter, scale, merge=True)["blocks.0.attn.qkv.weight"]
    q_weight, k_weight = hf["model.layers.0.self_attn.q_proj.weight"], hf["model.layers.0.self_attn.k_proj.weight"]
    assert torch.equal(merged[q_weight.shape[0]:q_weight.shape[0] + k_weight.shape[0]], k_weight)

    return dict(ids=ids, recorded_loss=recorded["loss"], adapter=adapter, logits=logits,
                reference_dtype=torch.float32, base_name=c["base"])


# ------------------------------------------------------------ files

def adapter_config(c, base_name):
    """LoraConfig's fields as PEFT's save_pretrained writes them (the defaults for everything not set here)."""
    return {
        "alpha_pattern": {},
        "auto_mapping": None,
        "base_model_name_or_path": base_name,
        "bias": "none",
        "fan_in_fan_out": c["fan_in_fan_out"],
        "inference_mode": True,
        "init_lora_weights": True,
        "layer_replication": None,
        "layers_pattern": None,
        "layers_to_transform": None,
        "loftq_config": {},
        "lora_alpha": c["lora_alpha"],
        "lora_dropout": 0.0,
        "megatron_config": None,
        "megatron_core": "megatron.core",
        "modules_to_save": None,
        "peft_type": "LORA",
        "r": c["r"],
        "rank_pattern": {},
        "revision": None,
        "target_modules": c["target_modules"],
        "task_type": "CAUSAL_LM",
        "use_dora": False,
        "use_rslora": False,
    }


def max_relative_difference(a, b):
    """max |a - b| / max |a| per row, the worst row: (T, V) each."""
    return ((a - b).abs().max(dim=1).values / a.abs().max(dim=1).values).max().item()


def make(name, made, c):
    ids, logits = made["ids"], made["logits"]
    dtype = made["reference_dtype"]
    targets = torch.tensor(ids[1:])
    base_logits = logits(dtype, with_adapter=False)
    loss_base = F.cross_entropy(base_logits, targets).item()
    tolerance = 1e-12 if dtype == torch.float64 else 1e-6  # (both are equal today, bit for bit)
    assert abs(loss_base - made["recorded_loss"]) <= tolerance * abs(made["recorded_loss"]), \
        f"{name}: the base's loss is {loss_base}, its fixture recorded {made['recorded_loss']}"

    adapted = logits(dtype)  # (T, V)
    loss = F.cross_entropy(adapted, targets).item()
    moved = max_relative_difference(base_logits, adapted)
    assert moved > 0.1, f"{name}: the adapter barely moves the logits ({moved} relative)"
    unmerged32 = logits(torch.float32)
    float32_error = max_relative_difference(adapted, unmerged32.to(dtype))
    assert float32_error < 1e-5, f"{name}: float32 and the reference disagree by {float32_error}"
    merged_check = max_relative_difference(unmerged32, logits(torch.float32, merge=True))
    assert merged_check < 1e-5, f"{name}: merged and unmerged weights disagree by {merged_check}"

    vocab = adapted.shape[1]
    columns = [round(i * (vocab - 1) / (LOGIT_COLUMNS - 1)) for i in range(LOGIT_COLUMNS)]
    position = adapted.shape[0] - 1
    directory = os.path.join(OUT_DIR, name)
    os.makedirs(directory, exist_ok=True)
    tensors = []
    for path, (A, B) in made["adapter"].items():
        tensors += [(f"base_model.model.{path}.lora_A.weight", A.numpy()),
                    (f"base_model.model.{path}.lora_B.weight", B.numpy())]
    safetensors_io.write(os.path.join(directory, "adapter_model.safetensors"), sorted(tensors), {"format": "pt"})
    with open(os.path.join(directory, "adapter_config.json"), "w") as f:
        json.dump(adapter_config(c, made["base_name"]), f, indent=2, sort_keys=True)
        f.write("\n")
    expected = {
        "base": made["base_name"],
        "ids": ids,
        "loss_base": loss_base,
        "loss": loss,
        "logits_position": position,
        "logit_columns": columns,
        "logits_with_adapter": [float(adapted[position, column]) for column in columns],
        "logsumexp_with_adapter": float(torch.logsumexp(adapted[position], dim=0)),
        "merged_check": merged_check,
        "r": c["r"],
        "lora_alpha": c["lora_alpha"],
        "scale": c["lora_alpha"] / c["r"],
        "reference_dtype": str(dtype).replace("torch.", ""),
        "producer": "tests/reference/make_lora_fixtures.py",
        "torch": torch.__version__,
    }
    with open(os.path.join(directory, "expected.json"), "w") as f:
        json.dump(expected, f, indent=1)
        f.write("\n")
    print(f"{directory}: {len(tensors)} tensors, loss {loss_base:.6f} -> {loss:.6f}, logits moved {moved:.2f}, "
          + (f"float32 vs float64 {float32_error:.1e}, " if dtype == torch.float64 else "")
          + f"merged vs unmerged {merged_check:.1e}")


def main():
    torch.set_num_threads(1)  # the Llama base's loss was recorded single-threaded
    make("gpt2", make_gpt2(FAMILIES["gpt2"]), FAMILIES["gpt2"])
    make("llama", make_llama(FAMILIES["llama"]), FAMILIES["llama"])


if __name__ == "__main__":
    main()
