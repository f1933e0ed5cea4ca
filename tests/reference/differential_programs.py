"""The differential test's programs: their file format, and how torch runs one.

make_differential_fixtures.py draws the programs and writes them with torch's
results; tests/differential/test_differential.cpp replays them through tg. Both
build a program's leaves from the same formula, described here, so the files
hold only what torch computed.

A program is a small DAG: 1 to 4 ops over 1 to 4 leaves, ending in one output.

tests/fixtures/differential/programs.json:
  {"torch_version": ..., "programs": [program, ...]}, one program a line:
  id        its number, also the seed of its leaf values
  dtype     "float32" or "float64": of every floating leaf, value and gradient
  leaves    [leaf, ...]; value i is leaf i, then each op's outputs in order
  ops       [{"op": name, "in": [value ids], <the op's arguments>}, ...]; names and
            arguments are those of make_op_fixtures.py's TORCH_OPS, plus NN_OPS below
            (nn.rms_norm's weight is an optional second input; nn.rope's "pairing"
            and "scaling" are optional, "interleaved" and "none" when absent);
            "outputs": n when torch's op gave n != 1 values (max, split)
  out       the value id of the output
  out_shape its shape
  offset    where its expected numbers start in expected.safetensors' tensor of
            the program's dtype: the output, then the gradient of every leaf
            whose "grad" is true, each row-major
A floating leaf: {"shape": base shape, "low": L?, "span": S?, "round": true?,
  "special": [every, value]?, "views": [...]?, "grad": bool}. Element i of the
  base (row-major) is L + k_i * (S / 2^24) with k_i = mix(seed, i) >> 40, a 24-bit
  integer, seed = 16 * id + leaf index; L and S default to -1 and 2 (uniform in
  [-1, 1)). S is 0 or a power of two, so the product is exact and the sum the
  one rounding, the same on both sides (a fused multiply-add cannot change it).
  "round" floors the value; "special" sets every element i with i % every == 0
  to value ("-inf" as a string). Then the base is rounded to the program's dtype
  and the views are applied in order: ["transpose", d0, d1], ["permute", dims],
  ["slice", dim, start, end, step], ["expand", shape] -- so a leaf may be
  non-contiguous, or expanded (stride 0). "grad" is false when torch gives the
  leaf no gradient (it only feeds a comparison): tg's must then be undefined or zero.
  "frozen": true makes a floating leaf one that does not require grad (a frozen
  weight or bias), on both sides; its "grad" is then false.
An index leaf: {"index": true, "shape": ..., "low": a, "high": b, "special": [every, value]?}:
  element i is a + mix(seed, i) % (b - a), int64.
The weight w of loss = sum(output * w): the formula with seed 16 * id + 15,
  low -1, span 2, the output's shape and dtype.
mix(seed, i) is SplitMix64's output for the state seed + (i + 1) * 0x9E3779B97F4A7C15.

tests/fixtures/differential/expected.safetensors: two flat tensors, "float32"
and "float64", every program's numbers back to back.
"""
import math
import os
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_modern_gpt_fixtures import inverse_frequencies  # noqa: E402
from make_op_fixtures import TORCH_OPS  # noqa: E402

F = torch.nn.functional
TORCH_DTYPES = {"float32": torch.float32, "float64": torch.float64}
NUMPY_DTYPES = {"float32": np.float32, "float64": np.float64}
GOLDEN = 0x9E3779B97F4A7C15
WEIGHT_SLOT = 15  # leaf seeds are 16 * id + 0..14, the weight's 16 * id + 15


def mix(seed, count):
    """SplitMix64 outputs for states seed + (i + 1) * golden, i < count (uint64 arithmetic wraps)."""
    z = np.uint64(seed) + np.arange(1, count + 1, dtype=np.uint64) * np.uint64(GOLDEN)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def special_value(value):
    return float(value) if isinstance(value, str) else value


def float_values(seed, spec, count, dtype):
    span = spec.get("span", 2.0)
    assert span == 0 or math.frexp(span)[0] == 0.5, f"span {span} is not 0 or a power of two"
    k = (mix(seed, count) >> np.uint64(40)).astype(np.float64)
    values = spec.get("low", -1.0) + k * (span / 2.0**24)
    if spec.get("round"):
        values = np.floor(values)
    if "special" in spec:
        every, value = spec["special"]
        values[::every] = special_value(value)
    return values.astype(NUMPY_DTYPES[dtype])


def index_values(seed, spec, count):
    low, high = spec["low"], spec["high"]
    assert high > low or count == 0, spec
    values = np.zeros(count, dtype=np.int64)
    if count:
        values = (mix(seed, count) % np.uint64(high - low)).astype(np.int64) + low
    if "special" in spec:
        every, value = spec["special"]
        values[::every] = value
    return values


def apply_view(x, view):
    name, *args = view
    if name == "transpose":
        return x.transpose(args[0], args[1])
    if name == "permute":
        return x.permute(args[0])
    if name == "slice":
        dim, start, end, step = args
        index = [slice(None)] * x.dim()
        index[dim] = slice(start, end, step)
        return x[tuple(index)]
    if name == "expand":
        return x.expand(args[0])
    raise ValueError(f"unknown view {name}")


def make_leaf(program_id, slot, spec, dtype, compute_dtype=None):
    """The leaf as torch sees it: values rounded to `dtype`, computed in `compute_dtype`."""
    seed = 16 * program_id + slot
    count = math.prod(spec["shape"])
    if spec.get("index"):
        return torch.from_numpy(index_values(seed, spec, count)).reshape(spec["shape"])
    values = float_values(seed, spec, count, dtype)
    base = torch.from_numpy(values).reshape(spec["shape"]).to(TORCH_DTYPES[compute_dtype or dtype])
    for view in spec.get("views", []):
        base = apply_view(base, view)
    return base.detach()


def weight(program_id, shape, dtype, compute_dtype=None):
    spec = {"shape": list(shape)}
    return make_leaf(program_id, WEIGHT_SLOT, spec, dtype, compute_dtype)


# ---- the fused nn ops, each against PyTorch's own function (or, for attention,
# RoPE, RMSNorm and SwiGLU, which torch 1.13 lacks, a composition of torch ops)


def torch_causal_attention(t, p):
    q, k, v = t  # (B, NH, Tq, HS), (B, NH, Tk, HS) x2 -> (B, Tq, NH * HS)
    batch, heads, queries, head_size = q.shape
    keys = k.shape[2]
    scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(head_size))
    position = torch.arange(queries).unsqueeze(1) + (keys - queries)
    future = torch.arange(keys).unsqueeze(0) > position  # (Tq, Tk): keys after the query's position
    weights = torch.softmax(scores.masked_fill(future, float("-inf")), -1)
    return [torch.matmul(weights, v).permute(0, 2, 1, 3).reshape(batch, queries, heads * head_size)]


def torch_rope(t, p):
    """RoPE as nn/functional/rope.h: "pairing" interleaved (x_2i, x_2i+1; the default)
    or half (x_i, x_i+HS/2: HF's rotate_half), "scaling" of the frequencies as HF's
    rope_type ("none", the default; "linear:F"; "llama3:F,low,high,original"). The
    angles in float64, then their cos and sin rounded to x's dtype, as the kernel's tables."""
    x = t[0]  # (B, NH, T, HS)
    positions, pairs = x.shape[2], x.shape[3] // 2
    frequencies = inverse_frequencies(x.shape[3], p["base"], p.get("scaling", "none"))  # (HS/2), float64
    angles = (p["position_offset"] + torch.arange(positions, dtype=torch.float64))[:, None] * frequencies[None]
    cosines, sines = torch.cos(angles).to(x.dtype), torch.sin(angles).to(x.dtype)  # (T, HS/2)
    half = p.get("pairing", "interleaved") == "half"
    first, second = (x[..., :pairs], x[..., pairs:]) if half else (x[..., 0::2], x[..., 1::2])
    rotated = [first * cosines - second * sines, first * sines + second * cosines]
    return [torch.cat(rotated, -1) if half else torch.stack(rotated, -1).reshape(x.shape)]


def torch_cross_entropy(t, p):
    logits, targets = t  # (..., V), (...): torch wants the classes in dim 1, so rows are flattened
    if logits.dim() == 1:
        return [F.cross_entropy(logits, targets, ignore_index=p["ignore_index"])]
    classes = logits.shape[-1]
    return [F.cross_entropy(logits.reshape(-1, classes), targets.reshape(-1), ignore_index=p["ignore_index"])]


def torch_gelu(t, p):
    return [F.gelu(t[0], approximate={"tanh": "tanh", "erf": "none"}[p["approximation"]])]


def torch_relu_squared(t, p):
    return [F.relu(t[0]).square()]


def torch_rms_norm(t, p):
    """HF's LlamaRMSNorm in x's own dtype: x * rsqrt(mean(x^2) + eps), times the weight
    when the op has one (a second input; nanochat's has none)."""
    x = t[0]  # (..., C)
    normalized = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + p["eps"])
    return [normalized * t[1] if len(t) > 1 else normalized]


def torch_swiglu(t, p):
    x = t[0]  # (..., 2H) = [gate | up] -> (..., H)
    hidden = x.shape[-1] // 2
    return [F.silu(x[..., :hidden]) * x[..., hidden:]]


def torch_layer_norm(t, p):
    x, weight_, bias = t
    return [F.layer_norm(x, (x.shape[-1],), weight_, bias, p["eps"])]


def torch_linear(t, p):
    x, weight_, bias = t  # (N, in), (out, in), (out)
    return [F.linear(x, weight_, bias)]


# The fused kernel and its *_reference composition are both checked against the same torch result.
NN_OPS = {}
for name, fn in [("causal_attention", torch_causal_attention), ("rope", torch_rope),
                 ("cross_entropy", torch_cross_entropy), ("gelu", torch_gelu), ("layer_norm", torch_layer_norm),
                 ("rms_norm", torch_rms_norm), ("swiglu", torch_swiglu), ("relu_squared", torch_relu_squared)]:
    NN_OPS[f"nn.{name}"] = fn
    NN_OPS[f"nn.{name}_reference"] = fn
# linear_product has no reference composition (matmul and add are checked on their own).
EDGE_OPS = {"nn.linear_product": torch_linear}
# The engine's primitive ops: make_op_fixtures' table without its compositions
# (which exist only as parity cases) and without to_float64 (programs keep one dtype).
PARITY_ONLY = {"operators", "transpose_sum", "views_sum", "permute_reshape_mean", "expand_mul_sum",
               "select_narrow_softmax", "layer_norm", "cross_entropy", "attention", "mlp", "to_float64"}
ALL_OPS = {**{k: v for k, v in TORCH_OPS.items() if k not in PARITY_ONLY}, **NN_OPS, **EDGE_OPS}


# ---- running a program


def run(program, dtype, compute_dtype=None):
    """(output, [gradient or None per leaf]) of the program, leaves rounded to
    `dtype` and computed in `compute_dtype` (default: dtype)."""
    values = []
    for slot, spec in enumerate(program["leaves"]):
        leaf = make_leaf(program["id"], slot, spec, dtype, compute_dtype)
        values.append(leaf.requires_grad_() if leaf.is_floating_point() and not spec.get("frozen") else leaf)
    leaves = list(values)
    for op in program["ops"]:
        values.extend(ALL_OPS[op["op"]]([values[i] for i in op["in"]], op))
    output = values[program["out"]]
    output.backward(weight(program["id"], output.shape, dtype, compute_dtype))
    grads = [leaf.grad if leaf.is_floating_point() else None for leaf in leaves]
    return output.detach(), grads
