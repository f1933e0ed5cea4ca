#!/usr/bin/python3
"""Random differential programs: PyTorch's outputs and gradients for a few
thousand small random compositions of tinygpt's ops.

How to run (from the project root; needs Debian's python3-torch and python3-numpy):

    /usr/bin/python3 tests/reference/make_differential_fixtures.py

It rewrites tests/fixtures/differential/programs.json and expected.safetensors
(their format: differential_programs.py), which are committed;
tests/differential/test_differential.cpp replays every program through tg and
compares. The script is deterministic: program i draws its choices from a
generator seeded with "program-i", so re-running it gives byte-identical files.

Each program starts with an op drawn from STARTS (every op, plus corner cases:
sizes 0, the edges issue 18 found), on fresh leaves of random shapes (sizes 0
and 1, tails of 1, 3, 17 and 129) and layouts (transposed, permuted, strided,
expanded); up to 3 more ops follow on its last value. Programs 3000 to 3599
start instead with one of issue 35's ops (MODERN_STARTS: RMSNorm with and without
weight, SwiGLU, ReLU^2, RoPE with both pairings and the rescalings, each fused
and composed), and any op may follow, those among them; the first 3000 draw
as they did before, so that they stay the same programs.

A program is kept only if it is well-conditioned: run in float32 and in float64
on the same (float32-representable) leaf values, the two agree to 1e-6 (for a
float32 program) or 1e-4 (for a float64 one) relative, absolute below 1. So
torch's own float32 rounding is a tenth of the replay's tolerance (1e-5), and a
mismatch means tg computes something else, not that a sum was reordered. (The
float64 programs' check is looser: it only has to show that float64 rounding
stays far below their tolerance, 1e-10.) One corner is the exception: a
layer_norm row of one large constant, where torch's float32 kernel itself is
off (2e-3 instead of 0); its expected values come from torch's float64 run.
"""
import json
import math
import os
import random
import sys
from collections import Counter

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402
from differential_programs import ALL_OPS, EDGE_OPS, NN_OPS, NUMPY_DTYPES, TORCH_DTYPES, make_leaf, run  # noqa: E402

OUTPUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "differential")
PROGRAM_COUNT = 3000
MODERN_PROGRAM_COUNT = 600  # then these, starting with issue 35's ops
MAX_LEAVES = 4
TAILS = [1, 3, 17, 129]  # vector tails: a lone element, a short remainder, one past 16, one past 128
# Conditioning: how far float32 may stray from float64 for a program to be kept.
CONDITIONING = {"float32": 1e-6, "float64": 1e-4}


def agree(a, b, tolerance):
    """Same shape, NaN and infinities in the same places, and |a - b| <= tolerance * max(1, |b|)."""
    if a.shape != b.shape:
        return False
    a, b = a.double().numpy(), b.double().numpy()
    if not np.array_equal(np.isnan(a), np.isnan(b)):
        return False
    finite = np.isfinite(b)
    if not np.array_equal(a[~finite & ~np.isnan(b)], b[~finite & ~np.isnan(b)]):
        return False
    return bool(np.all(np.abs(a[finite] - b[finite]) <= tolerance * np.maximum(1.0, np.abs(b[finite]))))


def well_conditioned(program):
    """float32 and float64 runs on the same float32 leaf values agree (see CONDITIONING)."""
    out32, grads32 = run(program, "float32")
    out64, grads64 = run(program, "float32", "float64")
    tolerance = CONDITIONING[program["dtype"]]
    if not agree(out32, out64, tolerance):
        return False
    return all((g32 is None) == (g64 is None) and (g32 is None or agree(g32, g64, tolerance))
               for g32, g64 in zip(grads32, grads64))


# ---- building random programs


class Reject(Exception):
    """This attempt cannot make a valid program; draw another."""


class Builder:
    """A program under construction, with the value of every node (computed in
    float64, for the choices that depend on values: domains, margins, ties)."""

    def __init__(self, rng, program_id, dtype):
        self.rng, self.id, self.dtype = rng, program_id, dtype
        self.leaves, self.ops, self.values, self.is_leaf = [], [], [], []
        self.value_ids = []  # per value: ("leaf", slot) or ("op", op index, output index)
        self.zero_size = 0.03  # probability that a random dim is 0
        # A corner where torch's float32 kernel is itself inaccurate: kept without the
        # conditioning check (and so without followers), its expected values taken
        # from torch's float64 run on the same leaves, rounded to the program's dtype.
        self.trusted = False

    def snapshot(self):
        return (len(self.leaves), len(self.ops), len(self.values))

    def restore(self, state):
        leaves, ops, values = state
        del self.leaves[leaves:], self.ops[ops:], self.values[values:], self.is_leaf[values:]
        del self.value_ids[values:]

    # -- values

    def shape(self, v):
        return list(self.values[v].shape)

    def value(self, v):
        return self.values[v]

    def is_float(self, v):
        return self.values[v].is_floating_point()

    def float_values(self):
        return [v for v in range(len(self.values)) if self.is_float(v)]

    def room(self, count=1):
        return len(self.leaves) + count <= MAX_LEAVES

    def leaf(self, shape, low=-1.0, span=2.0, round_values=False, special=None, layout="random"):
        """A floating leaf of `shape`; layout "random" makes it non-contiguous about a third of the time."""
        if not self.room():
            raise Reject("no room for another leaf")
        shape = list(shape)
        spec = {}
        if (low, span) != (-1.0, 2.0):  # the default, uniform in [-1, 1)
            spec.update(low=low, span=span)
        if round_values:
            spec["round"] = True
        if special is not None:
            spec["special"] = special
        base_shape, views = shape, []
        if layout == "random" and self.rng.random() < 0.35:
            base_shape, views = random_layout(self.rng, shape)
        elif layout not in ("random", "contiguous"):
            base_shape, views = layout
        spec["shape"] = base_shape
        if views:
            spec["views"] = views
        return self._add_leaf(spec)

    def index_leaf(self, shape, low, high, special=None):
        if not self.room():
            raise Reject("no room for another leaf")
        if high <= low and math.prod(shape) > 0:
            raise Reject(f"no valid index in [{low}, {high})")
        spec = {"index": True, "shape": list(shape), "low": low, "high": max(high, low + 1)}
        if special is not None:
            spec["special"] = special
        return self._add_leaf(spec)

    def _add_leaf(self, spec):
        slot = len(self.leaves)
        self.leaves.append(spec)
        value = make_leaf(self.id, slot, spec, self.dtype, "float64")
        self.values.append(value)
        self.is_leaf.append(True)
        self.value_ids.append(("leaf", slot))
        return len(self.values) - 1

    def op(self, name, inputs, **params):
        """Appends an op; returns the ids of its outputs."""
        op = {"op": name, "in": list(inputs), **params}
        try:
            outputs = ALL_OPS[name]([self.values[i] for i in inputs], op)
        except (RuntimeError, IndexError, ValueError) as error:
            raise Reject(f"torch refused {name}: {error}")
        for output in outputs:
            if output.numel() > 2000:
                raise Reject("too large")
        if len(outputs) != 1:
            op["outputs"] = len(outputs)  # so the replay can tell a missing piece from a wrong one
        index = len(self.ops)
        self.ops.append(op)
        first = len(self.values)
        for i, output in enumerate(outputs):
            self.values.append(output.detach())
            self.is_leaf.append(False)
            self.value_ids.append(("op", index, i))
        return list(range(first, len(self.values)))

    def finish(self, out):
        """The program as JSON: value ids renumbered as the replay counts them (leaves first)."""
        leaf_count = len(self.leaves)
        renumber, next_id = {}, leaf_count
        for v, origin in enumerate(self.value_ids):
            if origin[0] == "leaf":
                renumber[v] = origin[1]
        for index in range(len(self.ops)):
            for v, origin in enumerate(self.value_ids):
                if origin[0] == "op" and origin[1] == index:
                    renumber[v] = next_id
                    next_id += 1
        ops = [{**op, "in": [renumber[i] for i in op["in"]]} for op in self.ops]
        self.renumber = renumber  # for what a program adds after its ops (the edge fixtures' in-place writes)
        return {"id": self.id, "dtype": self.dtype, "leaves": [dict(spec) for spec in self.leaves], "ops": ops,
                "out": renumber[out]}


def random_size(rng, zero_size):
    if rng.random() < zero_size:
        return 0
    return rng.choice([1, 1, 2, 2, 3, 3, 4, 5])


def random_shape(b, min_dims=0, max_dims=4, max_numel=300):
    rng = b.rng
    dims = rng.choice([d for d in [0, 1, 1, 2, 2, 2, 3, 3, 4] if min_dims <= d <= max_dims] or [min_dims])
    shape = [random_size(rng, b.zero_size) for _ in range(dims)]
    if dims and rng.random() < 0.55:
        shape[-1] = rng.choice(TAILS)
    while math.prod(shape) > max_numel:  # halve the largest leading dim (or the tail when alone)
        candidates = [d for d in range(dims - 1) if shape[d] > 1] or [dims - 1]
        d = max(candidates, key=lambda i: shape[i])
        shape[d] //= 2
    return shape


def random_layout(rng, shape):
    """(base shape, views) whose views turn a contiguous base into a tensor of
    `shape` that is not contiguous: one or two of transpose, permute, a strided
    or offset slice, an expand."""
    views = []
    for _ in range(rng.choice([1, 1, 2])):
        dims = len(shape)
        kinds = ["slice", "expand"] if dims >= 1 else []
        kinds += ["transpose"] * 2 if dims >= 2 else []
        kinds += ["permute"] if dims >= 3 else []
        if not kinds:
            break
        kind = rng.choice(kinds)
        if kind == "transpose":
            d0, d1 = rng.sample(range(dims), 2)
            shape = list(shape)
            shape[d0], shape[d1] = shape[d1], shape[d0]
            views.insert(0, ["transpose", d0, d1])
        elif kind == "permute":
            dims_order = list(range(dims))
            while dims_order == list(range(dims)):
                rng.shuffle(dims_order)
            base = [0] * dims
            for i, d in enumerate(dims_order):
                base[d] = shape[i]
            views.insert(0, ["permute", dims_order])
            shape = base
        elif kind == "slice":
            d = rng.randrange(dims)
            step = rng.choice([1, 2, 3])
            start = rng.randrange(step + 2)
            end = start + shape[d] * step
            shape = list(shape)
            shape[d] = end + rng.choice([0, 1])
            views.insert(0, ["slice", d, start, end, step])
        else:  # expand a size-1 dim (and perhaps drop a leading one)
            d = rng.randrange(dims)
            target = list(shape)
            shape = list(shape)
            shape[d] = 1
            if d != 0 and dims >= 2 and rng.random() < 0.3:
                shape = shape[1:]
            views.insert(0, ["expand", target])
    return shape, views


def broadcast_partner(b, shape):
    """A shape that broadcasts with `shape`: the same, a suffix, some dims 1, 0-d,
    or bigger where `shape` has 1s (so both sides broadcast)."""
    rng = b.rng
    kind = rng.choice(["same", "same", "suffix", "ones", "both", "scalar"])
    if kind == "same" or not shape:
        return list(shape)
    if kind == "suffix":
        return list(shape[rng.randrange(len(shape) + 1):])
    if kind == "ones":
        return [1 if rng.random() < 0.5 else s for s in shape]
    if kind == "scalar":
        return []
    partner = [rng.choice([2, 3]) if s == 1 else rng.choice([1, s]) for s in shape]
    if rng.random() < 0.4:
        partner = [rng.choice([1, 2])] + partner
    if math.prod(np.broadcast_shapes(tuple(partner), tuple(shape))) > 1000:
        return list(shape)
    return partner


def existing_partner(b, shape_ok):
    """An existing floating value whose shape passes shape_ok, or Reject."""
    candidates = [v for v in b.float_values() if shape_ok(b.shape(v))]
    if not candidates:
        raise Reject("no partner")
    return b.rng.choice(candidates)


def operand(b, shape, **domain):
    """A fresh leaf of `shape` if there is room, else an existing value of that shape."""
    if b.room():
        return b.leaf(shape, **domain)
    return existing_partner(b, lambda s: s == list(shape))


# Extremes of a value, for its domain checks (an empty one passes them all).
def minimum(b, v):
    value = b.value(v)
    return value.min().item() if value.numel() else math.inf


def maximum(b, v):
    value = b.value(v)
    return value.max().item() if value.numel() else -math.inf


def smallest_magnitude(b, v):
    value = b.value(v)
    return value.abs().min().item() if value.numel() else math.inf


def largest_magnitude(b, v):
    value = b.value(v)
    return value.abs().max().item() if value.numel() else 0.0


POSITIVE = {"low": 0.5, "span": 2.0}  # [0.5, 2.5)
AWAY_FROM_ZERO = [{"low": 0.5, "span": 2.0}, {"low": -2.5, "span": 2.0}]


def start(b, x, min_dims=0, max_dims=4, **domain):
    """x if given, else a fresh leaf of a random shape."""
    if x is not None:
        if not (min_dims <= len(b.shape(x)) <= max_dims):
            raise Reject("rank")
        return x
    return b.leaf(random_shape(b, min_dims, max_dims), **domain)


# ---- families: each appends one or a few ops, to x (a value id) or to fresh leaves when x is None


def family_binary(b, x, op):
    rng = b.rng
    # Domains: a divisor away from 0, a power's base positive, its exponent moderate.
    if x is None:
        x = b.leaf(random_shape(b), **(POSITIVE if op == "pow" else {}))
    shape = b.shape(x)
    if op == "div":
        x_may_divide = smallest_magnitude(b, x) >= 0.3
        x_divides = x_may_divide and rng.random() < 0.4
        partner_shape = broadcast_partner(b, shape)
        if x_divides:
            y = operand(b, partner_shape) if rng.random() < 0.9 else x
            return b.op("div", [y, x])
        y = operand(b, partner_shape, **rng.choice(AWAY_FROM_ZERO)) if rng.random() < 0.9 or not x_may_divide else x
        if smallest_magnitude(b, y) < 0.3:
            raise Reject("divisor near 0")
        return b.op("div", [x, y])
    if op == "pow":
        partner_shape = broadcast_partner(b, shape)
        if minimum(b, x) >= 0.3 and maximum(b, x) <= 10 and rng.random() < 0.6:
            y = operand(b, partner_shape, low=-2.0, span=4.0)
            if largest_magnitude(b, y) > 3:
                raise Reject("exponent too large")
            return b.op("pow", [x, y])
        if largest_magnitude(b, x) > 3:
            raise Reject("exponent too large")
        y = operand(b, partner_shape, **POSITIVE)
        if minimum(b, y) < 0.3:
            raise Reject("base near 0")
        return b.op("pow", [y, x])
    y = x if rng.random() < 0.1 else operand(b, broadcast_partner(b, shape))
    inputs = [x, y] if rng.random() < 0.5 else [y, x]
    return b.op(op, inputs)


SCALARS = [-2.5, -1.0, 0.5, 1.75, 3.0]


def family_scalar(b, x, op):
    rng = b.rng
    if op == "pow_scalar":
        exponent = rng.choice([2.0, 3.0, 0.0, 0.5, -0.5, 1.5, -1.0])
        integral = exponent in (0.0, 2.0, 3.0)
        x = start(b, x, **({} if integral else POSITIVE))
        if exponent == 0.0 and smallest_magnitude(b, x) == 0.0:
            raise Reject("0^0 (the edge family makes those)")
        if not integral and (minimum(b, x) < 0.3 or maximum(b, x) > 10):
            raise Reject("base not positive")
        return b.op(op, [x], exponent=exponent)
    if op == "scalar_div":
        x = start(b, x, **rng.choice(AWAY_FROM_ZERO))
        if smallest_magnitude(b, x) < 0.3:
            raise Reject("divisor near 0")
        return b.op(op, [x], scalar=rng.choice(SCALARS))
    x = start(b, x)
    scalar = rng.choice([-2.5, 0.5, 4.0]) if op == "div_scalar" else rng.choice(SCALARS)
    return b.op(op, [x], scalar=scalar)


def family_unary(b, x, op):
    domain = {"exp": {"low": -4.0, "span": 8.0}, "log": {"low": 0.25, "span": 4.0},
              "sqrt": {"low": 0.25, "span": 4.0}}.get(op, {})
    x = start(b, x, **domain)
    if op == "exp" and maximum(b, x) > 10:
        raise Reject("exp overflow")
    if op in ("log", "sqrt") and minimum(b, x) < 0.2:
        raise Reject("near 0")
    return b.op(op, [x])


def family_where(b, x, op):
    """A comparison (op) makes a mask; where or masked_fill uses it."""
    rng = b.rng
    x = start(b, x)
    shape = b.shape(x)
    mask_shape = [1 if rng.random() < 0.3 else s for s in shape[rng.randrange(len(shape) + 1):]]
    if op in ("eq", "ne"):  # equalities need ties: small integers on both sides
        left = b.leaf(mask_shape, low=-2.0, span=4.0, round_values=True)
        right = b.leaf(broadcast_partner_within(b, mask_shape), low=-2.0, span=4.0, round_values=True)
    else:
        if b.is_leaf[x] and b.room() and rng.random() < 0.5 and mask_shape == shape:
            left = x  # compare x itself: leaves hold the same bits on both sides, no margin needed
        else:
            left = b.leaf(mask_shape)
        right = b.leaf(broadcast_partner_within(b, mask_shape))
        if not (b.is_leaf[left] and b.is_leaf[right]):
            gap = (b.value(left) - b.value(right)).abs()
            if gap.numel() and gap.min().item() < 1e-3:
                raise Reject("comparison too close to call")
    (mask,) = b.op(op, [left, right])
    if rng.random() < 0.5:
        value = rng.choice([0.0, -3.5, 2.0])
        return b.op("masked_fill", [x, mask], value=value)
    other = x if not b.room() or rng.random() < 0.2 else b.leaf(broadcast_partner_within(b, shape))
    return b.op("where", [mask, x, other] if rng.random() < 0.5 else [mask, other, x])


def broadcast_partner_within(b, shape):
    """A shape that broadcasts to `shape` (never bigger)."""
    rng = b.rng
    tail = list(shape[rng.randrange(len(shape) + 1):]) if rng.random() < 0.3 else list(shape)
    return [1 if rng.random() < 0.3 else s for s in tail]


def random_dims(b, dims):
    """A random subset of range(dims) (empty: every dim), some counted from the end."""
    rng = b.rng
    chosen = sorted(rng.sample(range(dims), rng.randint(0, dims)))
    return [d - dims if rng.random() < 0.3 else d for d in chosen]


def family_reduce(b, x, op):
    rng = b.rng
    x = start(b, x)
    dims = random_dims(b, len(b.shape(x)))
    params = {"dims": dims, "keepdim": rng.random() < 0.5}
    if op == "var":
        # Unbiased over one element is 0/0: NaN, and torch's gradient of it is inf (or an error).
        shape = b.shape(x)
        count = math.prod(shape[d] for d in dims) if dims else math.prod(shape)
        params["unbiased"] = count >= 2 and rng.random() < 0.6
    return b.op(op, [x], **params)


def no_ties(b, v, dim):
    """Every slice along dim has one clear maximum (a tie, or a near one, would
    let rounding pick another index than torch's)."""
    value = b.value(v)
    if value.shape[dim] < 2:
        return True
    top = value.topk(2, dim).values
    first, second = top.select(dim, 0), top.select(dim, 1)
    return bool(((first - second) > 1e-4 * torch.clamp(first.abs(), min=1.0)).all())


def family_max(b, x, op):
    rng = b.rng
    x = start(b, x, min_dims=1)
    shape = b.shape(x)
    dims = [d for d in range(len(shape)) if shape[d] > 0 and no_ties(b, x, d)]
    if not dims:
        raise Reject("no dim with a clear maximum")
    dim = rng.choice(dims)
    signed_dim = dim - len(shape) if rng.random() < 0.3 else dim
    if op == "max":
        keepdim = rng.random() < 0.5
        values, indices = b.op("max", [x], dim=signed_dim, keepdim=keepdim)
        if keepdim and rng.random() < 0.4:  # the indices pick the same elements again
            return b.op("gather", [x, indices], dim=dim)
        return [values]
    if len(shape) == 2 and rng.random() < 0.4:  # index_select(x, dim, argmax(x, dim)): columns or rows
        (indices,) = b.op("argmax", [x], dim=signed_dim, keepdim=False)
        return b.op("index_select", [x, indices], dim=dim)
    (indices,) = b.op("argmax", [x], dim=signed_dim, keepdim=True)
    return b.op("gather", [x, indices], dim=dim)


MAGNITUDES = [{"low": -1.0, "span": 2.0}, {"low": -8.0, "span": 16.0}, {"low": -256.0, "span": 512.0},
              {"low": 10000.0, "span": 16.0}, {"low": -10016.0, "span": 16.0}]


def family_softmax(b, x, op):
    rng = b.rng
    x = start(b, x, min_dims=1, **rng.choice(MAGNITUDES))
    shape = b.shape(x)
    dim = rng.randrange(len(shape))
    if rng.random() < 0.2 and b.room(2):  # -inf at masked positions, as attention has, never a whole row
        scores = b.leaf(shape, layout="contiguous")
        (masked,) = b.op("gt", [scores, b.leaf([], low=0.5, span=0.0)])  # about a quarter of them
        if not b.value(masked).logical_not().any(dim=dim).all().item():
            raise Reject("a whole row masked")
        (x,) = b.op("masked_fill", [x, masked], value="-inf")
    signed = dim - len(shape) if rng.random() < 0.5 else dim
    return b.op(op, [x], dim=signed)


SIZES = [1, 2, 3, 5, 17]


def matmul_size(b, large_ok=True):
    rng = b.rng
    if rng.random() < b.zero_size:
        return 0
    return rng.choice(SIZES + ([129] if large_ok else []))


def transposed_layout(shape):
    """Column-major in the last two dims: the transpose flag BLAS gets, no copy."""
    base = list(shape)
    base[-1], base[-2] = base[-2], base[-1]
    return base, [["transpose", len(shape) - 2, len(shape) - 1]]


def matrix_leaf(b, shape):
    rng = b.rng
    if len(shape) >= 2 and rng.random() < 0.4:
        return b.leaf(shape, layout=transposed_layout(shape))
    if len(shape) >= 2 and rng.random() < 0.2 and b.room(2):  # an explicit transpose op instead
        base = list(shape)
        base[-1], base[-2] = base[-2], base[-1]
        (t,) = b.op("transpose", [b.leaf(base)], dim0=-1, dim1=-2)
        return t
    return b.leaf(shape)


def batch_dims(b):
    rng = b.rng
    return [matmul_size(b, False) if rng.random() < 0.2 else rng.choice([1, 2, 3])
            for _ in range(rng.choice([1, 1, 2]))]


def family_matmul(b, x, op):
    rng = b.rng
    if x is None:
        m, k, n = matmul_size(b), matmul_size(b), matmul_size(b)
        if m * k > 400 or k * n > 400:
            k = rng.choice([1, 2, 3, 17])
        kind = rng.choice(["vv", "mv", "vm", "mm", "mm", "bmm", "bmm_broadcast", "batched_2d", "batched_2d",
                           "2d_batched", "vector_batched", "batched_vector"])
        batch = batch_dims(b)
        left, right = {
            "vv": ([k], [k]), "mv": ([m, k], [k]), "vm": ([k], [k, n]), "mm": ([m, k], [k, n]),
            "bmm": (batch + [m, k], batch + [k, n]),
            "bmm_broadcast": (batch + [1, m, k], [rng.choice([2, 3])] + [k, n]),
            "batched_2d": (batch + [m, k], [k, n]), "2d_batched": ([m, k], batch + [k, n]),
            "vector_batched": ([k], batch + [k, n]), "batched_vector": (batch + [m, k], [k]),
        }[kind]
        if math.prod(left) > 600 or math.prod(right) > 600:
            raise Reject("too large")
        a = matrix_leaf(b, left)
        return b.op("matmul", [a, matrix_leaf(b, right)])
    shape = b.shape(x)
    if not shape:
        raise Reject("0-d")
    if len(shape) >= 2 and rng.random() < 0.3:  # x on the right: (..., M, K) @ x
        other = rng.choice([[matmul_size(b, False), shape[-2]], [shape[-2]]])
        return b.op("matmul", [operand_matrix(b, other), x])
    k = shape[-1]
    n = matmul_size(b, False)
    right = rng.choice([[k], [k, n], batch_dims(b)[:1] + [k, n] if len(shape) >= 2 else [k, n]])
    if len(shape) > 2 and len(right) == 3 and rng.random() < 0.5:
        right = [shape[-3], k, n]
    return b.op("matmul", [x, operand_matrix(b, right)])


def operand_matrix(b, shape):
    if b.room():
        return matrix_leaf(b, shape)
    return existing_partner(b, lambda s: s == list(shape))


def family_index(b, x, op):
    rng = b.rng
    if op == "embedding":
        if x is not None and len(b.shape(x)) == 2 and b.shape(x)[0] > 0:
            table = x
        else:
            table = b.leaf([rng.choice([1, 3, 5, 17]), rng.choice(TAILS + [2, 4])])
        ids_shape = [random_size(rng, b.zero_size) for _ in range(rng.choice([0, 1, 2, 3]))]
        ids = b.index_leaf(ids_shape, 0, b.shape(table)[0])
        return b.op("embedding", [table, ids])
    x = start(b, x, min_dims=1)
    shape = b.shape(x)
    dim = rng.randrange(len(shape))
    signed = dim - len(shape) if rng.random() < 0.3 else dim
    if op == "index_select":
        count = rng.choice([0, 1, 2, 3, 5]) if shape[dim] > 0 else 0
        index = b.index_leaf([count], 0, shape[dim])
        return b.op("index_select", [x, index], dim=signed)
    index_shape = [rng.randint(min(1, s), s) for s in shape]
    index_shape[dim] = rng.choice([1, 2, 3, 4]) if shape[dim] > 0 else 0
    index = b.index_leaf(index_shape, 0, shape[dim])
    return b.op("gather", [x, index], dim=signed)


def family_cat(b, x, op):
    rng = b.rng
    x = start(b, x, min_dims=1)
    shape = b.shape(x)
    dim = rng.randrange(len(shape))
    signed = dim - len(shape) if rng.random() < 0.3 else dim
    if op == "cat":
        parts = [x]
        for _ in range(rng.choice([1, 1, 2])):
            part_shape = list(shape)
            part_shape[dim] = rng.choice([0, 1, 2, 3])
            parts.append(b.leaf(part_shape) if b.room() and rng.random() < 0.8 else x)
        rng.shuffle(parts)
        return b.op("cat", parts, dim=signed)
    size = shape[dim]
    if op == "split_sizes":
        cuts = sorted(rng.randint(0, size) for _ in range(rng.choice([0, 1, 2, 3])))
        sizes = [hi - lo for lo, hi in zip([0] + cuts, cuts + [size])]
        pieces = b.op("split_sizes", [x], sizes=sizes, dim=signed)
    else:
        pieces = b.op("split_chunk", [x], chunk=rng.randint(1, max(1, size)), dim=signed)
    if rng.random() < 0.3:  # one piece goes on; the others get no gradient
        return [rng.choice(pieces)]
    rng.shuffle(pieces)
    return b.op("cat", pieces, dim=signed)


def new_shape(b, shape):
    """A shape with the same number of elements: merged or split dims, added or dropped 1s, -1 inferred."""
    rng = b.rng
    count = math.prod(shape)
    kind = rng.choice(["flat", "merge", "split", "ones"])
    result = list(shape)
    if kind == "flat" or not shape:
        result = [count]
    elif kind == "merge" and len(shape) >= 2:
        d = rng.randrange(len(shape) - 1)
        result = shape[:d] + [shape[d] * shape[d + 1]] + shape[d + 2:]
    elif kind == "split":
        d = rng.randrange(len(shape))
        divisors = [f for f in range(1, shape[d] + 1) if shape[d] % f == 0] or [1]
        f = rng.choice(divisors)
        result = shape[:d] + [f, shape[d] // f if f else 0] + shape[d + 1:]
    else:
        result = [s for s in shape if s != 1 or rng.random() < 0.5]
        result.insert(rng.randrange(len(result) + 1), 1)
    if count > 0 and result and rng.random() < 0.3:
        result[rng.randrange(len(result))] = -1
    return result


def family_view(b, x, op):
    rng = b.rng
    if op == "view" and x is not None and not b.is_leaf[x]:
        raise Reject("view only on leaves: a computed value's strides are the engine's own choice")
    x = start(b, x, min_dims=1 if op not in ("view", "reshape", "unsqueeze", "contiguous", "clone", "expand") else 0)
    shape = b.shape(x)
    dims = len(shape)
    signed = lambda d, n=dims: d - n if rng.random() < 0.3 else d  # noqa: E731
    if op in ("view", "reshape"):
        return b.op(op, [x], shape=new_shape(b, shape))
    if op == "transpose":
        if dims < 2:
            raise Reject("rank")
        d0, d1 = rng.sample(range(dims), 2)
        return b.op(op, [x], dim0=signed(d0), dim1=signed(d1))
    if op == "permute":
        order = list(range(dims))
        rng.shuffle(order)
        return b.op(op, [x], dims=order)
    if op == "slice":
        d = rng.randrange(dims)
        size = shape[d]
        start_ = rng.randint(-size - 1, size + 1)
        end = rng.choice([rng.randint(-size - 1, size + 2), size, size + 3])
        return b.op(op, [x], dim=signed(d), start=start_, end=end, step=rng.choice([1, 1, 2, 3]))
    if op == "narrow":
        d = rng.randrange(dims)
        start_ = rng.randint(0, shape[d])
        return b.op(op, [x], dim=signed(d), start=start_, length=rng.randint(0, shape[d] - start_))
    if op == "select":
        candidates = [d for d in range(dims) if shape[d] > 0]
        if not candidates:
            raise Reject("nothing to select")
        d = rng.choice(candidates)
        return b.op(op, [x], dim=signed(d), index=rng.randint(-shape[d], shape[d] - 1))
    if op == "squeeze":
        ones = [d for d in range(dims) if shape[d] == 1]
        if not ones:
            (x,) = b.op("unsqueeze", [x], dim=rng.randint(0, dims))
            return b.op(op, [x], dim=b.shape(x).index(1))
        return b.op(op, [x], dim=signed(rng.choice(ones)))
    if op == "unsqueeze":
        return b.op(op, [x], dim=signed(rng.randint(0, dims), dims + 1))
    if op == "expand":
        target = [(rng.choice([0, 2, 3, 4]) if rng.random() > 0.1 else 0) if s == 1 else rng.choice([s, -1])
                  for s in shape]
        target = [rng.choice([1, 2, 3]) for _ in range(rng.choice([0, 0, 1, 2]))] + target
        return b.op(op, [x], shape=target)
    return b.op(op, [x])  # contiguous, clone


def family_nn(b, x, op):
    rng = b.rng
    name = op.removeprefix("nn.").removesuffix("_reference")
    if name == "gelu":
        x = start(b, x, low=rng.choice([-4.0, -8.0]), span=rng.choice([8.0, 16.0]))
        return b.op(op, [x], approximation=rng.choice(["tanh", "erf"]))
    if name == "layer_norm":
        if x is None:
            shape = random_shape(b, 1)
            shape[-1] = rng.choice(TAILS + [2, 4, 8])
            x = b.leaf(shape, **rng.choice([{}, {"low": -8.0, "span": 16.0}, {"low": 100.0, "span": 4.0}]))
        shape = b.shape(x)
        if not shape or shape[-1] == 0 or not b.room(2):
            raise Reject("layer_norm needs (..., C) and two leaves")
        channels = shape[-1]
        weight = b.leaf([channels], low=0.5, span=1.0)
        bias = b.leaf([channels])
        return b.op(op, [x, weight, bias], eps=rng.choice([1e-5, 1e-5, 1e-3]))
    if name == "cross_entropy":
        if x is None:
            classes = rng.choice([1, 2, 3, 5, 17, 129])
            rows = rng.choice([[], [rng.choice([1, 2, 4, 7])], [rng.choice([1, 2]), rng.choice([1, 3])]])
            x = b.leaf(rows + [classes], **rng.choice([{"low": -4.0, "span": 8.0}, {"low": -32.0, "span": 64.0}]))
        shape = b.shape(x)
        if not shape or shape[-1] == 0:
            raise Reject("cross_entropy needs classes")
        if len(shape) == 1:
            raise Reject("unbatched logits: the edge family makes those")
        classes = shape[-1]
        ignore_index = rng.choice([-100, -100, -1, rng.randrange(classes)])
        special = [rng.choice([2, 3, 5]), ignore_index] if rng.random() < 0.4 else None
        targets = b.index_leaf(shape[:-1], 0, classes, special)
        valid = b.value(targets) != ignore_index
        if b.value(targets).numel() and not valid.any():
            raise Reject("every target ignored: the edge family makes those")
        return b.op(op, [x, targets], ignore_index=ignore_index)
    if name == "rope":
        if x is None:
            shape = [rng.choice([1, 2]), rng.choice([1, 2, 3]), rng.choice([1, 3, 17]), rng.choice([2, 4, 8, 16])]
            x = b.leaf(shape, layout=head_layout(b, shape))
        shape = b.shape(x)
        if len(shape) != 4 or shape[3] % 2:
            raise Reject("rope needs (B, NH, T, HS) with HS even")
        return b.op(op, [x], position_offset=rng.choice([0, 5, 1000]), base=rng.choice([10000.0, 100.0]))
    assert name == "causal_attention", name
    if x is not None:
        shape = b.shape(x)
        if len(shape) != 4 or shape[2] == 0 or shape[3] == 0 or not b.room(2):
            raise Reject("attention needs q (B, NH, T, HS) and two leaves")
        batch, heads, queries, head_size = shape
        q = x
    else:
        batch, heads, queries = rng.choice([1, 2]), rng.choice([1, 2, 3]), rng.choice([1, 2, 3, 5, 17])
        head_size = rng.choice([1, 2, 3, 4, 8, 17])
        q = None
    keys = queries + rng.choice([0, 0, 1, 3])
    kv_shape = [batch, heads, keys, head_size]
    if q is None:
        q = b.leaf([batch, heads, queries, head_size], layout=head_layout(b, [batch, heads, queries, head_size]))
        if keys == queries and rng.random() < 0.15:  # self-attention of one tensor: three gradients add up
            return b.op(op, [q, q, q])
    k = b.leaf(kv_shape, layout=head_layout(b, kv_shape))
    v = k if rng.random() < 0.15 else b.leaf(kv_shape, layout=head_layout(b, kv_shape))
    return b.op(op, [q, k, v])


# The ops issue 35 added for the Llama-style block, which only the programs from
# PROGRAM_COUNT on draw (so the first PROGRAM_COUNT stay what they were).
MODERN_OPS = [f"nn.{name}{suffix}" for name in ("rms_norm", "swiglu", "relu_squared") for suffix in ("", "_reference")]
# RoPE's rescalings, each reaching some of the three llama3 regions (kept, blended,
# divided) for the bases and head sizes below: e.g. base 10000, HS 16 has wavelengths
# 6.3 to 19869, base 100 6.3 to 353.
ROPE_SCALINGS = ["none", "none", "linear:2", "linear:0.5", "llama3:8,1,4,8192", "llama3:4,1,4,64", "llama3:32,2,8,16"]


def family_modern(b, x, op):
    """Issue 35's ops: RMSNorm with and without weight, SwiGLU, ReLU^2, RoPE with both
    pairings and the rescalings; sizes 0 and 1, non-contiguous leaves (b.leaf's layouts)."""
    rng = b.rng
    name = op.removeprefix("nn.").removesuffix("_reference")
    if name == "rms_norm":
        if x is None:
            shape = random_shape(b, 1)
            shape[-1] = 0 if rng.random() < b.zero_size else rng.choice(TAILS + [2, 4, 8])
            # Rows of order 1, 8, around 100 (far from 0: no cancellation to fear), and of
            # mean square near eps, where eps decides the scale.
            x = b.leaf(shape, **rng.choice([{}, {"low": -8.0, "span": 16.0}, {"low": 100.0, "span": 4.0},
                                            {"low": -2.0**-10, "span": 2.0**-9}]))
        shape = b.shape(x)
        if not shape:
            raise Reject("rms_norm needs (..., C)")
        weight = [b.leaf([shape[-1]], low=0.5, span=1.0)] if rng.random() < 0.7 else []  # nanochat's has none
        return b.op(op, [x] + weight, eps=rng.choice([1e-6, 1e-5, 1e-3]))
    if name == "swiglu":
        if x is None:
            hidden = 0 if rng.random() < b.zero_size else rng.choice([1, 1, 2, 3, 8, 17, 65])
            shape = random_shape(b, 0, 3, 24) + [2 * hidden]
            x = b.leaf(shape, **rng.choice([{}, {"low": -4.0, "span": 8.0}, {"low": -16.0, "span": 32.0}]))
        shape = b.shape(x)
        if not shape or shape[-1] % 2:
            raise Reject("swiglu needs (..., 2H)")
        return b.op(op, [x])
    if name == "relu_squared":  # whole numbers put exact zeros at the kink
        x = start(b, x, **rng.choice([{}, {"low": -4.0, "span": 8.0, "round_values": True}, {"low": -8.0, "span": 16.0}]))
        return b.op(op, [x])
    assert name == "rope", name
    if x is None:
        shape = [rng.choice([1, 2]), rng.choice([1, 2, 3]), rng.choice([1, 3, 17]), rng.choice([2, 4, 6, 8, 16, 34])]
        if rng.random() < b.zero_size:
            shape[rng.randrange(4)] = 0
        x = b.leaf(shape, layout=head_layout(b, shape))
    shape = b.shape(x)
    if len(shape) != 4 or shape[3] % 2:
        raise Reject("rope needs (B, NH, T, HS) with HS even")
    return b.op(op, [x], position_offset=rng.choice([0, 5, 1000]), base=rng.choice([10000.0, 100.0, 500000.0]),
                pairing=rng.choice(["half", "half", "interleaved"]), scaling=rng.choice(ROPE_SCALINGS))


def head_layout(b, shape):
    """Often a (B, T, NH, HS) buffer seen as (B, NH, T, HS), as a QKV projection's heads are."""
    if b.rng.random() < 0.5:
        batch, heads, positions, head_size = shape
        return [batch, positions, heads, head_size], [["permute", [0, 2, 1, 3]]]
    return "random"


# ---- edge cases: sizes 0, the edges issue 18 found and other corners


def family_edge(b, x, op):
    rng = b.rng
    if op == "edge.zero_size_reduce":  # a size-0 dim that is not reduced (and one that is)
        shape = [rng.choice([0, 2, 3]) for _ in range(rng.choice([2, 3]))]
        shape[rng.randrange(len(shape))] = 0
        shape[rng.randrange(len(shape))] = rng.choice([2, 3, 17])
        x = b.leaf(shape)
        dims = [d for d in range(len(shape)) if shape[d] > 0]
        reduce = rng.choice(["sum", "mean", "var"])
        params = {"dims": rng.sample(dims, rng.randint(1, len(dims))), "keepdim": rng.random() < 0.5}
        if reduce == "var":
            params["unbiased"] = math.prod(shape[d] for d in params["dims"]) >= 2 and rng.random() < 0.5
        return b.op(reduce, [x], **params)
    if op == "edge.matmul_empty":  # (B, M, K) @ (K, N), or (M, K) @ (B, K, N), with K or N zero
        k, n = rng.choice([(0, 3), (3, 0), (0, 0), (0, 17), (17, 0)])
        batch = [rng.choice([1, 2, 3])] * rng.choice([1, 2])
        left, right = batch + [rng.choice([1, 2, 3]), k], [k, n]
        if rng.random() < 0.5:
            left, right = [rng.choice([1, 2]), k], batch + [k, n]
        return b.op("matmul", [b.leaf(left), b.leaf(right)])
    if op == "edge.pow_zero":  # bases with exact zeros, exponents 0 or positive integers
        shape = random_shape(b, 1, 2, 40)
        base = b.leaf(shape, low=0.0, span=4.0, round_values=True, special=[3, 0.0])
        if rng.random() < 0.5:
            return b.op("pow_scalar", [base], exponent=rng.choice([0.0, 2.0, 3.0]))
        exponent = b.leaf(broadcast_partner(b, shape), low=0.0, span=4.0, round_values=True, special=[2, 0.0])
        return b.op("pow", [base, exponent])
    if op == "edge.cross_entropy_ignored":  # every target ignored, or an ignored row whose logit 0 is -inf
        fn = rng.choice(["nn.cross_entropy", "nn.cross_entropy_reference"])
        classes, rows = rng.choice([2, 3, 17]), rng.choice([1, 2, 5])
        ignore_index = rng.choice([-100, 1])
        if rng.random() < 0.5:
            logits = b.leaf([rows, classes], low=-4.0, span=8.0)
            targets = b.index_leaf([rows], 0, classes, [1, ignore_index])
        else:  # column 0 is -inf in every row, so only the ignored rows (every other one) may point at it
            logits = b.leaf([rows, classes], low=-4.0, span=8.0, special=[classes, "-inf"], layout="contiguous")
            targets = b.index_leaf([rows], 1, classes, [2, ignore_index])
        return b.op(fn, [logits, targets], ignore_index=ignore_index)
    if op == "edge.split_empty":  # split along a size-0 dim: torch gives one empty piece
        shape = [rng.choice([1, 2, 3]) for _ in range(rng.choice([1, 2]))]
        dim = rng.randrange(len(shape))
        shape[dim] = 0
        x = b.leaf(shape)
        if rng.random() < 0.5:
            pieces = b.op("split_chunk", [x], chunk=rng.choice([1, 2]), dim=dim)
        else:
            pieces = b.op("split_sizes", [x], sizes=[0] * rng.choice([1, 2]), dim=dim)
        if rng.random() < 0.5:
            return [pieces[0]]
        return b.op("cat", pieces, dim=dim)
    if op == "edge.cross_entropy_unbatched":  # logits (V), a 0-d target
        fn = rng.choice(["nn.cross_entropy", "nn.cross_entropy_reference"])
        classes = rng.choice([1, 3, 17])
        return b.op(fn, [b.leaf([classes], low=-4.0, span=8.0), b.index_leaf([], 0, classes)],
                    ignore_index=-100)
    if op == "edge.layer_norm_constant":  # rows of one large value: x - mean is exactly 0
        # torch's own float32 layer_norm gives 2e-3 there instead of 0. In float64 the
        # rounding of any mean, times 1/sqrt(eps), already exceeds 1e-10: float32 only.
        if b.dtype != "float32":
            raise Reject("float32 only")
        b.trusted = True
        fn = rng.choice(["nn.layer_norm", "nn.layer_norm_reference"])
        channels = rng.choice([17, 129, 3])
        x = b.leaf([rng.choice([1, 2, 3]), channels], low=rng.choice([1000.1, -250.3, 1234.567, 1.0]), span=0.0)
        # eps 1e-3, not 1e-5: 1/sqrt(eps) scales dx up to where float32's spacing nears
        # the tolerance, and these programs skip the check that would catch that.
        return b.op(fn, [x, b.leaf([channels], low=0.5, span=1.0), b.leaf([channels])], eps=1e-3)
    raise ValueError(op)


# The ops a program may start with, each with its family and a relative weight:
# every op of ALL_OPS, matmul, reductions and softmax more often, the corners rarely.
STARTS = []
for _op in ["add", "sub", "mul", "div", "pow"]:
    STARTS.append((family_binary, _op, 3))
for _op in ["pow_scalar", "add_scalar", "sub_scalar", "mul_scalar", "div_scalar", "scalar_add", "scalar_sub",
            "scalar_mul", "scalar_div"]:
    STARTS.append((family_scalar, _op, 1))
for _op in ["neg", "exp", "log", "sqrt", "tanh"]:
    STARTS.append((family_unary, _op, 1))
for _op in ["eq", "ne", "lt", "le", "gt", "ge"]:
    STARTS.append((family_where, _op, 1))
for _op in ["sum", "mean", "var"]:
    STARTS.append((family_reduce, _op, 3))
for _op in ["max", "argmax"]:
    STARTS.append((family_max, _op, 2))
for _op in ["softmax", "log_softmax"]:
    STARTS.append((family_softmax, _op, 3))
STARTS.append((family_matmul, "matmul", 8))
for _op in ["index_select", "gather", "embedding"]:
    STARTS.append((family_index, _op, 2))
for _op in ["cat", "split_sizes", "split_chunk"]:
    STARTS.append((family_cat, _op, 2))
for _op in ["view", "reshape", "transpose", "permute", "slice", "narrow", "select", "squeeze", "unsqueeze", "expand",
            "contiguous", "clone"]:
    STARTS.append((family_view, _op, 1))
for _op in NN_OPS:
    if _op not in MODERN_OPS:
        STARTS.append((family_nn, _op, 2))
for _op in ["edge.zero_size_reduce", "edge.matmul_empty", "edge.pow_zero", "edge.cross_entropy_ignored",
            "edge.split_empty", "edge.cross_entropy_unbatched", "edge.layer_norm_constant"]:
    STARTS.append((family_edge, _op, 0.25))
# What may follow: any family but the edge cases, applied to the last value.
FOLLOWERS = [(family, op, weight) for family, op, weight in STARTS if family is not family_edge]
# The programs from PROGRAM_COUNT on start with one of issue 35's ops (RoPE with its
# pairing and rescaling drawn), and any op may follow, those among them.
MODERN_STARTS = [(family_modern, op, 2 if "relu_squared" in op else 3)
                 for op in MODERN_OPS + ["nn.rope", "nn.rope_reference"]]
MODERN_FOLLOWERS = FOLLOWERS + [(family, op, 2) for family, op, _ in MODERN_STARTS]


def draw(rng, table):
    return rng.choices(table, weights=[weight for _, _, weight in table])[0]


def build(b, starts=STARTS, followers=FOLLOWERS):
    """One attempt at a random program; raises Reject when it goes nowhere."""
    rng = b.rng
    family, op, _ = draw(rng, starts)
    if family is not family_edge and rng.random() < 0.05:
        b.zero_size = 0.3  # a program rich in size-0 dims
    outputs = family(b, None, op)
    out = next(v for v in reversed(outputs) if b.is_float(v))
    op_budget = len(b.ops) if b.trusted else rng.choice([1, 2, 2, 3, 3, 4])
    tries = 0
    while len(b.ops) < op_budget and tries < 20:
        tries += 1
        family, op, _ = draw(rng, followers)
        state = b.snapshot()
        try:
            outputs = family(b, out, op)
        except Reject:
            b.restore(state)
            continue
        if len(b.ops) > 4:
            b.restore(state)
            continue
        floats = [v for v in outputs if b.is_float(v)]
        if not floats:
            b.restore(state)
            continue
        out = floats[-1]
    return b.finish(out)


def make_program(program_id):
    rng = random.Random(f"program-{program_id}")
    dtype = "float64" if program_id % 3 == 2 else "float32"
    for _ in range(200):
        b = Builder(rng, program_id, dtype)
        try:
            program = build(b) if program_id < PROGRAM_COUNT else build(b, MODERN_STARTS, MODERN_FOLLOWERS)
            if not b.trusted and not well_conditioned(program):
                continue
            output, grads = run(program, dtype, "float64" if b.trusted else None)
        except (Reject, RuntimeError):  # RuntimeError: torch's own backward refused
            continue
        return program, expected_numbers(program, dtype, output, grads)
    raise RuntimeError(f"program {program_id}: no valid program in 200 attempts")


def expected_numbers(program, dtype, output, grads):
    """Notes which leaves torch gave a gradient and the output's shape in `program`; returns
    its expected numbers (the output, then each gradient) as flat arrays of its dtype."""
    for spec, grad in zip(program["leaves"], grads):
        if not spec.get("index"):
            spec["grad"] = grad is not None
    program["out_shape"] = list(output.shape)
    expected = [t.to(TORCH_DTYPES[dtype]) for t in [output] + [grad for grad in grads if grad is not None]]
    return [t.contiguous().reshape(-1).numpy() for t in expected]


def write_fixtures(programs_name, expected_name, made):
    """Writes [(program, expected arrays), ...] as OUTPUT_DIR/programs_name and expected_name,
    each program's "offset" pointing at its numbers."""
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    flat = {"float32": [], "float64": []}
    sizes = {"float32": 0, "float64": 0}
    lines = []
    for program, expected in made:
        dtype = program["dtype"]
        program["offset"] = sizes[dtype]
        for array in expected:
            flat[dtype].append(array)
            sizes[dtype] += array.size
        lines.append(json.dumps(program, sort_keys=True, separators=(",", ":")))
    with open(os.path.join(OUTPUT_DIR, programs_name), "w") as file:
        file.write('{"torch_version":' + json.dumps(torch.__version__) + ',"programs":[\n')
        file.write(",\n".join(lines))
        file.write("\n]}\n")
    safetensors_io.write(
        os.path.join(OUTPUT_DIR, expected_name),
        [(dtype, np.concatenate(arrays) if arrays else np.zeros(0, NUMPY_DTYPES[dtype]))
         for dtype, arrays in flat.items()],
        {"torch_version": torch.__version__, "programs": str(len(made))},
    )


def main():
    made = [make_program(program_id) for program_id in range(PROGRAM_COUNT + MODERN_PROGRAM_COUNT)]
    op_counts = Counter(op["op"] for program, _ in made for op in program["ops"])
    missing = sorted(set(ALL_OPS) - set(EDGE_OPS) - set(op_counts))
    assert not missing, f"ops no program uses: {missing}"
    write_fixtures("programs.json", "expected.safetensors", made)
    print(f"wrote {len(made)} programs over {len(op_counts)} ops to {os.path.normpath(OUTPUT_DIR)}")
    # Issue 35's ops, RoPE counted by its pairing (family_modern's RoPE names one, family_nn's none).
    modern = Counter(op["op"] + (f" {op['pairing']}" if "pairing" in op else "") for program, _ in made
                     for op in program["ops"] if op["op"] in MODERN_OPS or "pairing" in op)
    covering = sum(any(op["op"] in MODERN_OPS or "pairing" in op for op in program["ops"]) for program, _ in made)
    print(f"{covering} programs use issue 35's ops:", ", ".join(f"{op} {count}" for op, count in sorted(modern.items())))
    print("fewest uses:", ", ".join(f"{op} {count}" for op, count in sorted(op_counts.items(), key=lambda i: i[1])[:8]))


if __name__ == "__main__":
    torch.set_num_threads(1)  # one summation order, whatever the machine
    main()
