#!/usr/bin/python3
"""The differential test's edge programs (issue 33's classes), beside the random ones.

    python3 tests/reference/make_differential_edge_fixtures.py

writes tests/fixtures/differential/edge_programs.json and edge_expected.safetensors,
in the format differential_programs.py describes, with three additions:
  "frozen": true on a leaf      it does not require grad (a frozen weight or bias);
  "inplace": {"value": v, "op": "mul_" | "fill_" | "add_", "scalar": s}
                                after the forward (and the output's check) value v is
                                written in place, as raw::mul_ / fill_ / add_ do and as
                                torch does under no_grad; the expected gradients are
                                those of the program without the write. tg must either
                                refuse the backward (a tensor it saved was changed) or
                                give exactly those gradients: never silently others.
                                "torch_refused" says what torch 1.13 did (its saved
                                tensors are not always tg's: div saves a and b, tg b and c);
  "refused": "words"            tg must refuse the program with an error containing them
                                (an int64 tensor times a fractional scalar: torch
                                promotes to float, tg says why it will not guess).
The classes: frozen inputs of every op with an optional gradient (linear_product, layer_norm,
matmul, mul, div, attention), 0-d tensors through every op that takes a dim, extreme values
(|x| up to 1e30 and beyond float32's square) through the fused ops, in-place writes between
forward and backward, and integer tensors with float scalars. Extreme-value programs take
their expected numbers from torch's float64 run (the truth the float32 kernels must reach).
The last MODERN_COUNT programs are the same classes (but the int scalars) through issue 35's
ops (modern_program; in-place writes after random programs that start with one of them).
"""
import os
import random
import sys
from collections import Counter

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential_programs import ALL_OPS, EDGE_OPS, make_leaf, run, weight  # noqa: E402
from make_differential_fixtures import (MODERN_FOLLOWERS, MODERN_STARTS, OUTPUT_DIR, Builder, Reject, build,  # noqa: E402
                                        expected_numbers, head_layout, well_conditioned, write_fixtures)

FIRST_ID = 100000  # leaf seeds 16 * id + slot stay apart from the random programs'
COUNT = 600
MODERN_COUNT = 200  # then these, with issue 35's ops (ids from FIRST_ID + COUNT on)


def freeze(b, v):
    b.leaves[b.value_ids[v][1]]["frozen"] = True


def some_frozen(b, leaves):
    """Freezes a random non-empty subset of `leaves`, leaving at least one that requires grad."""
    frozen = b.rng.sample(leaves, b.rng.randint(1, len(leaves) - 1))
    for v in frozen:
        freeze(b, v)


def frozen_program(b):
    rng = b.rng
    kind = rng.choice(["linear", "linear", "layer_norm", "matmul", "mul", "div", "attention"])
    if kind == "linear":
        rows, inner, outer = rng.choice([1, 2, 5, 17]), rng.choice([1, 3, 8, 17]), rng.choice([1, 2, 7, 16])
        x, w, bias = b.leaf([rows, inner]), b.leaf([outer, inner]), b.leaf([outer])
        some_frozen(b, [x, w, bias])
        return b.op("nn.linear_product", [x, w, bias])
    if kind == "layer_norm":
        channels = rng.choice([1, 2, 3, 17, 129])
        x = b.leaf([rng.choice([1, 2, 3]), channels])
        w, bias = b.leaf([channels], low=0.5, span=1.0), b.leaf([channels])
        some_frozen(b, [x, w, bias])
        return b.op(rng.choice(["nn.layer_norm", "nn.layer_norm_reference"]), [x, w, bias], eps=1e-5)
    if kind == "matmul":
        m, k, n = rng.choice([1, 3]), rng.choice([2, 17]), rng.choice([1, 4])
        a, c = b.leaf([m, k]), b.leaf([k, n])
        some_frozen(b, [a, c])
        return b.op("matmul", [a, c])
    if kind in ("mul", "div"):
        shape = [rng.choice([1, 3]), rng.choice([2, 17])]
        a, c = b.leaf(shape), b.leaf(shape, low=0.5, span=1.0)
        some_frozen(b, [a, c])
        return b.op(kind, [a, c])
    batch, heads, positions, head_size = 1, rng.choice([1, 2]), rng.choice([1, 3, 5]), rng.choice([2, 4])
    shape = [batch, heads, positions, head_size]
    q, k, v = (b.leaf(shape, layout=head_layout(b, shape)) for _ in range(3))
    some_frozen(b, [q, k, v])
    return b.op(rng.choice(["nn.causal_attention", "nn.causal_attention_reference"]), [q, k, v])


def zero_d_program(b):
    rng = b.rng
    x = b.leaf([])
    dim = rng.choice([0, -1])
    kind = rng.choice(["sum", "mean", "var", "softmax", "log_softmax", "max", "unsqueeze", "squeeze", "transpose"])
    if kind in ("sum", "mean"):
        out = b.op(kind, [x], dims=[dim], keepdim=rng.random() < 0.5)
    elif kind == "var":
        out = b.op("var", [x], dims=[dim], unbiased=False, keepdim=rng.random() < 0.5)
    elif kind in ("softmax", "log_softmax"):
        out = b.op(kind, [x], dim=dim)
    elif kind == "max":
        out = b.op("max", [x], dim=dim, keepdim=rng.random() < 0.5)[:1]
    elif kind == "unsqueeze":
        out = b.op("unsqueeze", [x], dim=dim)
    elif kind == "squeeze":
        out = b.op("squeeze", [x], dim=dim)
    else:
        out = b.op("transpose", [x], dim0=dim, dim1=rng.choice([0, -1]))
    if rng.random() < 0.5:  # and on through a product with another 0-d leaf
        out = b.op("mul", [out[0], b.leaf([])])
    return out


def extreme_program(b):
    """Values far past what the random programs draw, through the fused ops; float32 only,
    the expected numbers from torch's float64 run on the same leaves."""
    rng = b.rng
    if b.dtype != "float32":
        raise Reject("float32 only")
    b.trusted = True
    kind = rng.choice(["cross_entropy", "layer_norm", "gelu"])
    if kind == "cross_entropy":  # a large offset: softmax and the gradient do not change with it
        classes, rows = rng.choice([2, 3, 17, 129]), rng.choice([1, 2, 5])
        offset = 2.0 ** rng.choice([14, 20, 26, 40, 60, 100])
        logits = b.leaf([rows, classes], low=offset * rng.choice([1, -1]), span=rng.choice([2.0, 8.0]) * offset / 2 ** 14
                        if offset > 2 ** 20 else 8.0)
        targets = b.index_leaf([rows], 0, classes)
        return b.op(rng.choice(["nn.cross_entropy", "nn.cross_entropy_reference"]), [logits, targets],
                    ignore_index=-100)
    if kind == "layer_norm":  # squared deviations past float32's largest (only the fused op survives them)
        channels = rng.choice([2, 3, 17, 129])
        scale = 2.0 ** rng.choice([64, 100, 120])
        x = b.leaf([rng.choice([1, 2]), channels], low=-scale, span=2 * scale)
        return b.op("nn.layer_norm", [x, b.leaf([channels], low=0.5, span=1.0), b.leaf([channels])], eps=1e-5)
    special = rng.choice([-1e12, -1e30, 1e30])
    fn = "nn.gelu" if special != -1e12 else rng.choice(["nn.gelu", "nn.gelu_reference"])
    x = b.leaf([rng.choice([3, 17, 40])], low=-8.0, span=16.0, special=[rng.choice([2, 3]), special])
    return b.op(fn, [x], approximation=rng.choice(["tanh", "erf"]))


def modern_program(b, kind):
    """The same classes through issue 35's ops: a frozen RMSNorm weight (or a frozen x
    under a trained weight), ReLU^2 of a 0-d tensor, and extremes: rows whose squares
    pass float32's largest or fall below its smallest (RMSNorm), gates and values of
    1e30 (SwiGLU's sigmoid saturates; products overflow to inf, as in float64 rounded)."""
    rng = b.rng
    if kind == "frozen":
        channels = rng.choice([1, 2, 3, 17, 129])
        x = b.leaf([rng.choice([1, 2, 3]), channels])
        w = b.leaf([channels], low=0.5, span=1.0)
        some_frozen(b, [x, w])
        return b.op(rng.choice(["nn.rms_norm", "nn.rms_norm_reference"]), [x, w], eps=1e-6)
    if kind == "zero_d":
        out = b.op(rng.choice(["nn.relu_squared", "nn.relu_squared_reference"]), [b.leaf([])])
        if rng.random() < 0.5:
            out = b.op("mul", [out[0], b.leaf([])])
        return out
    assert kind == "extreme", kind
    if b.dtype != "float32":
        raise Reject("float32 only")
    b.trusted = True
    op = rng.choice(["rms_norm", "rms_norm", "swiglu", "relu_squared"])
    if op == "rms_norm":
        channels = rng.choice([2, 3, 17, 129])
        exponent = rng.choice([64, 100, 120, -70, -80])
        scale = 2.0 ** exponent
        x = b.leaf([rng.choice([1, 2]), channels], low=-scale, span=2 * scale)
        # Only the fused op keeps squares past float32's largest; underflowing ones both survive.
        fn = "nn.rms_norm" if exponent > 0 else rng.choice(["nn.rms_norm", "nn.rms_norm_reference"])
        weight = [b.leaf([channels], low=0.5, span=1.0)] if rng.random() < 0.5 else []
        return b.op(fn, [x] + weight, eps=1e-6)
    special = [rng.choice([2, 3]), rng.choice([-1e12, -1e30, 1e30])]
    if op == "swiglu":  # only the fused op: the composition's gate / (1 + exp(-gate)) has the gradient inf / inf there
        x = b.leaf([rng.choice([1, 2, 5]), 2 * rng.choice([3, 17])], low=-8.0, span=16.0, special=special)
        return b.op("nn.swiglu", [x])
    x = b.leaf([rng.choice([3, 17, 40])], low=-8.0, span=16.0, special=special)
    return b.op(rng.choice(["nn.relu_squared", "nn.relu_squared_reference"]), [x])


def two_pass_layer_norm(t, p):
    """The truth for rows of |x| up to 2^120: torch 1.13's own float64 layer_norm loses the
    variance to cancellation there (it gave 134247 for a normalised value at 1.8e19)."""
    x, weight_, bias = t
    centered = x - x.mean(-1, keepdim=True)
    return [centered / torch.sqrt((centered * centered).mean(-1, keepdim=True) + p["eps"]) * weight_ + bias]


def run_for_expected(program, dtype, trusted):
    """run(), with trusted programs in float64 and the two-pass LayerNorm as their truth."""
    if not trusted:
        return run(program, dtype)
    saved = ALL_OPS["nn.layer_norm"]
    ALL_OPS["nn.layer_norm"] = two_pass_layer_norm
    try:
        return run(program, dtype, "float64")
    finally:
        ALL_OPS["nn.layer_norm"] = saved


def in_place_target(b):
    """A value to write into after the forward: a leaf or an op's output, floating or index."""
    candidates = [v for v in range(len(b.values)) if b.values[v].numel() > 0]
    if not candidates:
        raise Reject("nothing to write into")
    v = b.rng.choice(candidates)
    if b.is_float(v):
        op = b.rng.choice(["mul_", "fill_", "add_"])
        return v, {"value": b.renumber[v], "op": op, "scalar": {"mul_": 3.0, "fill_": 0.25, "add_": 1.0}[op]}
    return v, {"value": b.renumber[v], "op": "fill_", "scalar": 0.0}  # index 0 stays valid


def torch_with_write(program, dtype):
    """Runs the program in torch, writes in place under no_grad, then backward: True when torch refused."""
    values = []
    for slot, spec in enumerate(program["leaves"]):
        leaf = make_leaf(program["id"], slot, spec, dtype)
        values.append(leaf.requires_grad_() if leaf.is_floating_point() and not spec.get("frozen") else leaf)
    for op in program["ops"]:
        values.extend(ALL_OPS[op["op"]]([values[i] for i in op["in"]], op))
    output = values[program["out"]]
    write = program["inplace"]
    target = values[write["value"]]
    with torch.no_grad():
        getattr(target, write["op"])(write["scalar"])
    try:
        output.backward(weight(program["id"], output.shape, dtype))
    except RuntimeError as error:
        if "modified by an inplace operation" in str(error):
            return True
        raise
    return False


def make_program(program_id):
    rng = random.Random(f"edge-program-{program_id}")
    dtype = "float64" if program_id % 3 == 2 else "float32"
    modern = program_id >= FIRST_ID + COUNT
    kinds = ["frozen"] * 3 + ["zero_d"] * 2 + ["inplace"] * 3 + ([] if modern else ["int_scalar"])
    kind = rng.choice(kinds + ["extreme"] * 3 if dtype == "float32" else kinds)
    for _ in range(200):
        b = Builder(rng, program_id, dtype)
        try:
            if kind == "int_scalar":
                ids = b.index_leaf([rng.choice([1, 3, 17])], -5, 6)
                out = b.op(rng.choice(["mul_scalar", "add_scalar", "sub_scalar", "scalar_mul"]), [ids],
                           scalar=rng.choice([2.5, 0.5, -1.25]))
                program = b.finish(out[0])
                program["refused"] = "is not a whole number"
                program["out_shape"] = b.shape(out[0])
                return program, []
            if kind == "inplace":
                program = build(b, MODERN_STARTS, MODERN_FOLLOWERS) if modern else build(b)
                v, write = in_place_target(b)
                if 0 in b.values[v].stride() and b.values[v].numel() > 1:
                    continue  # an expanded view: both sides refuse the write itself (test_edge_findings.cpp)
                program["inplace"] = write
            else:
                classes = {"frozen": frozen_program, "zero_d": zero_d_program, "extreme": extreme_program}
                outputs = modern_program(b, kind) if modern else classes[kind](b)
                program = b.finish(next(v for v in reversed(outputs) if b.is_float(v)))
            if not b.trusted and not well_conditioned(program):
                continue
            output, grads = run_for_expected(program, dtype, b.trusted)
            if kind == "inplace":
                try:
                    program["torch_refused"] = torch_with_write(program, dtype)
                except RuntimeError:
                    continue  # torch refused the write itself
        except (Reject, RuntimeError, StopIteration):
            continue
        return program, expected_numbers(program, dtype, output, grads)
    raise RuntimeError(f"edge program {program_id}: no valid program in 200 attempts")


def main():
    made = [make_program(program_id) for program_id in range(FIRST_ID, FIRST_ID + COUNT + MODERN_COUNT)]
    kinds = Counter()
    for program, _ in made:
        kinds.update(["refused" if "refused" in program else "inplace" if "inplace" in program else
                      "frozen" if any(spec.get("frozen") for spec in program["leaves"]) else
                      "zero_d" if any(spec["shape"] == [] for spec in program["leaves"]) else "extreme"])
        if program.get("torch_refused"):
            kinds.update(["torch refused the backward"])
    assert set(EDGE_OPS) <= {op["op"] for program, _ in made for op in program["ops"]}
    write_fixtures("edge_programs.json", "edge_expected.safetensors", made)
    print(f"wrote {len(made)} edge programs to {os.path.normpath(OUTPUT_DIR)}:", dict(kinds))


if __name__ == "__main__":
    torch.set_num_threads(1)
    main()
