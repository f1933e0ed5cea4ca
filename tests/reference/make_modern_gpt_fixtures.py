"""Writes the PyTorch fixtures of the modern (Llama-style) block that
tests/models/test_torch_modern_parity.cpp checks.

Each fixture is a 2-layer model written here from scratch in PyTorch, with the
semantics of Hugging Face's LlamaForCausalLM (and its Qwen2/Qwen3 relatives):

  - RMSNorm in float32: x / sqrt(mean(x^2) + eps) * weight (no weight: nanochat);
  - attention's q, k, v from one fused Linear whose rows are [q | k | v]: NH heads
    of q, KVH heads of k and of v, each head HD = head_dim consecutive rows;
    query head h reads KV head h // (NH / KVH) (HF's repeat_kv);
  - QK-norm: RMSNorm over each head's q and k (weights of HD), before the rotation;
  - RoPE with the rotate-half pairing of HF checkpoints: channel i turns with
    channel i + HD/2 by pos * inv_freq[i], inv_freq[i] = theta^(-2i/HD), rescaled
    by "linear:F" (inv_freq / F) or "llama3:F,low,high,original" (HF's
    _compute_llama3_parameters);
  - softmax(q k^T / sqrt(HD)) with the causal mask;
  - MLP: SwiGLU down(silu(gate x) * up x), its fused c_fc rows [gate | up]; or
    ReLU^2: down(relu(fc x)^2);
  - biases: "none", "qkv" (Qwen2), "all";
  - the output head tied to the token embedding or a separate lm_head.

For a batch of 2 x 16 random ids it records, as make_gpt_fixtures.py does:

    param.<name>    every parameter, under tinygpt's name for it
    inputs, targets (B, T) int64
    logits          (B, T, V)
    loss            0-d, mean cross-entropy
    grad.<name>     d loss / d parameter

and tinygpt's config JSON as metadata "config". Run with Debian's python3
(torch + numpy), from the project root:

    /usr/bin/python3 tests/reference/make_modern_gpt_fixtures.py tests/fixtures/modern
"""
import json
import math
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

VOCAB, BLOCK, LAYERS, CHANNELS = 65, 16, 2, 32
BATCH, TIME = 2, 16

# One entry per published family, with the switches that family uses.
COMBINATIONS = {
    "llama3": dict(seed=2001, n_head=4, n_kv_head=2, head_dim=8, norm_weight=True, mlp="swiglu", mlp_hidden=0,
                   qk_norm=False, bias="none", tie_embeddings=False, rope_base=500000.0,
                   rope_scaling="llama3:8,1,4,16", norm_eps=1e-5),
    "qwen3": dict(seed=2002, n_head=4, n_kv_head=2, head_dim=16, norm_weight=True, mlp="swiglu", mlp_hidden=80,
                  qk_norm=True, bias="none", tie_embeddings=False, rope_base=1000000.0, rope_scaling="none",
                  norm_eps=1e-6),
    "qwen2": dict(seed=2003, n_head=4, n_kv_head=2, head_dim=8, norm_weight=True, mlp="swiglu", mlp_hidden=0,
                  qk_norm=False, bias="qkv", tie_embeddings=True, rope_base=1000000.0, rope_scaling="linear:2",
                  norm_eps=1e-6),
    "nanochat": dict(seed=2004, n_head=4, n_kv_head=1, head_dim=8, norm_weight=False, mlp="relu2", mlp_hidden=0,
                     qk_norm=True, bias="none", tie_embeddings=False, rope_base=10000.0, rope_scaling="none",
                     norm_eps=1e-6),
}


def mlp_hidden(c):
    """The MLP's hidden size: given, else 8/3 C rounded up to 64 for SwiGLU, 4 C otherwise."""
    if c["mlp_hidden"]:
        return c["mlp_hidden"]
    if c["mlp"] == "swiglu":
        return (8 * CHANNELS // 3 + 63) // 64 * 64
    return 4 * CHANNELS


def parameter_shapes(c):
    """tinygpt's parameter names and shapes."""
    nh, kvh, hd, hidden = c["n_head"], c["n_kv_head"], c["head_dim"], mlp_hidden(c)
    fc_rows = 2 * hidden if c["mlp"] == "swiglu" else hidden
    shapes = [("wte.weight", (VOCAB, CHANNELS))]
    for layer in range(LAYERS):
        p = f"blocks.{layer}."
        if c["norm_weight"]:
            shapes.append((p + "ln_1.weight", (CHANNELS,)))
        shapes.append((p + "attn.qkv.weight", ((nh + 2 * kvh) * hd, CHANNELS)))
        if c["bias"] in ("all", "qkv"):
            shapes.append((p + "attn.qkv.bias", ((nh + 2 * kvh) * hd,)))
        if c["qk_norm"] and c["norm_weight"]:
            shapes += [(p + "attn.q_norm.weight", (hd,)), (p + "attn.k_norm.weight", (hd,))]
        shapes.append((p + "attn.c_proj.weight", (CHANNELS, nh * hd)))
        if c["bias"] == "all":
            shapes.append((p + "attn.c_proj.bias", (CHANNELS,)))
        if c["norm_weight"]:
            shapes.append((p + "ln_2.weight", (CHANNELS,)))
        shapes.append((p + "mlp.c_fc.weight", (fc_rows, CHANNELS)))
        if c["bias"] == "all":
            shapes.append((p + "mlp.c_fc.bias", (fc_rows,)))
        shapes.append((p + "mlp.c_proj.weight", (CHANNELS, hidden)))
        if c["bias"] == "all":
            shapes.append((p + "mlp.c_proj.bias", (CHANNELS,)))
    if c["norm_weight"]:
        shapes.append(("ln_f.weight", (CHANNELS,)))
    if not c["tie_embeddings"]:
        shapes.append(("lm_head.weight", (VOCAB, CHANNELS)))
    return shapes


def random_parameters(c, generator):
    """Norm weights near 1, everything else N(0, 0.02^2) (biases too, so a mix-up shows)."""
    params = {}
    for name, shape in parameter_shapes(c):
        is_norm = name.split(".")[-2] in ("ln_1", "ln_2", "ln_f", "q_norm", "k_norm")
        value = 1 + 0.1 * torch.randn(shape, generator=generator) if is_norm else 0.02 * torch.randn(shape, generator=generator)
        params[name] = value.float().requires_grad_(True)
    return params


def rms_norm(x, weight, eps):
    """HF's LlamaRMSNorm: in float32, then times the weight."""
    x32 = x.float()
    normed = x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps)
    return normed * weight if weight is not None else normed


def inverse_frequencies(head_dim, base, scaling):
    """theta^(-2i/HD) for i < HD/2, in float64, rescaled as HF's rope_type linear and llama3."""
    inv_freq = torch.pow(base, -torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    kind, _, arguments = scaling.partition(":")
    if kind == "linear":
        return inv_freq / float(arguments)
    if kind == "llama3":
        factor, low, high, original = (float(a) for a in arguments.split(","))
        low_wavelen, high_wavelen = original / low, original / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (original / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        return torch.where(medium, smoothed, scaled)
    return inv_freq


def rope_half(x, inv_freq):
    """x (B, H, T, HD): HF's rotate_half RoPE, pairs (i, i + HD/2)."""
    time = x.shape[-2]
    angle = torch.arange(time, dtype=torch.float64)[:, None] * inv_freq[None]  # (T, HD/2)
    cos = torch.cat([torch.cos(angle)] * 2, dim=-1).float()                    # (T, HD)
    sin = torch.cat([torch.sin(angle)] * 2, dim=-1).float()
    half = x.shape[-1] // 2
    rotated = torch.cat([-x[..., half:], x[..., :half]], dim=-1)
    return x * cos + rotated * sin


def forward(params, ids, c):
    """ids (B, T) -> logits (B, T, V)."""
    batch, time = ids.shape
    nh, kvh, hd, eps = c["n_head"], c["n_kv_head"], c["head_dim"], c["norm_eps"]
    inv_freq = inverse_frequencies(hd, c["rope_base"], c["rope_scaling"])
    get = lambda name: params.get(name)  # noqa: E731  (None where the switch drops it)
    x = params["wte.weight"][ids]  # (B, T, C)
    for layer in range(LAYERS):
        p = lambda name: get(f"blocks.{layer}.{name}")  # noqa: E731
        h = rms_norm(x, p("ln_1.weight"), eps)
        qkv = F.linear(h, p("attn.qkv.weight"), p("attn.qkv.bias"))  # (B, T, (NH + 2 KVH) HD)
        q, k, v = qkv.split([nh * hd, kvh * hd, kvh * hd], dim=2)
        q = q.view(batch, time, nh, hd).transpose(1, 2)   # (B, NH, T, HD)
        k = k.view(batch, time, kvh, hd).transpose(1, 2)  # (B, KVH, T, HD)
        v = v.view(batch, time, kvh, hd).transpose(1, 2)
        if c["qk_norm"]:
            q, k = rms_norm(q, p("attn.q_norm.weight"), eps), rms_norm(k, p("attn.k_norm.weight"), eps)
        q, k = rope_half(q, inv_freq), rope_half(k, inv_freq)
        k = k.repeat_interleave(nh // kvh, dim=1)  # (B, NH, T, HD): HF's repeat_kv
        v = v.repeat_interleave(nh // kvh, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)  # (B, NH, T, T)
        causal = torch.tril(torch.ones(time, time, dtype=torch.bool))
        weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        heads = (weights @ v).transpose(1, 2).reshape(batch, time, nh * hd)
        x = x + F.linear(heads, p("attn.c_proj.weight"), p("attn.c_proj.bias"))
        h = rms_norm(x, p("ln_2.weight"), eps)
        fc = F.linear(h, p("mlp.c_fc.weight"), p("mlp.c_fc.bias"))
        if c["mlp"] == "swiglu":
            gate, up = fc.chunk(2, dim=-1)
            hidden = F.silu(gate) * up
        else:
            hidden = torch.relu(fc).square()
        x = x + F.linear(hidden, p("mlp.c_proj.weight"), p("mlp.c_proj.bias"))
    x = rms_norm(x, get("ln_f.weight"), eps)
    head = params["wte.weight"] if c["tie_embeddings"] else params["lm_head.weight"]
    return x @ head.t()


def tinygpt_config(c):
    """The config as tinygpt's GPTConfig::to_json writes it (the keys that differ from the defaults)."""
    return {"preset": "torch-fixture", "vocab_size": VOCAB, "block_size": BLOCK, "n_layer": LAYERS,
            "n_head": c["n_head"], "n_embd": CHANNELS, "n_kv_head": c["n_kv_head"], "head_dim": c["head_dim"],
            "norm": "rmsnorm", "norm_weight": c["norm_weight"], "norm_eps": c["norm_eps"], "mlp": c["mlp"],
            "mlp_hidden": c["mlp_hidden"], "qk_norm": c["qk_norm"], "bias": c["bias"],
            "tie_embeddings": c["tie_embeddings"], "positional": "rope", "rope_pairing": "half",
            "rope_base": c["rope_base"], "rope_scaling": c["rope_scaling"], "dropout": 0.0}


def make_fixture(kind, path):
    c = COMBINATIONS[kind]
    generator = torch.Generator().manual_seed(c["seed"])
    params = random_parameters(c, generator)
    initial = {name: value.detach().clone() for name, value in params.items()}
    ids = torch.randint(0, VOCAB, (BATCH, TIME + 1), generator=generator)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()

    logits = forward(params, inputs, c)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()

    tensors = [("inputs", inputs.numpy()), ("targets", targets.numpy())]
    tensors += [("logits", logits.detach().numpy()), ("loss", loss.detach().numpy())]
    tensors += [("param." + name, value.numpy()) for name, value in initial.items()]
    tensors += [("grad." + name, value.grad.numpy()) for name, value in params.items()]
    metadata = {"config": json.dumps(tinygpt_config(c)), "torch": torch.__version__,
                "producer": "tests/reference/make_modern_gpt_fixtures.py"}
    safetensors_io.write(path, tensors, metadata)
    print(f"{path}: loss {loss.item():.6f}, {len(params)} parameters")


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    torch.set_num_threads(1)
    os.makedirs(sys.argv[1], exist_ok=True)
    for kind in COMBINATIONS:
        make_fixture(kind, os.path.join(sys.argv[1], f"{kind}.safetensors"))


if __name__ == "__main__":
    main()
