"""Reference values from PyTorch for every differentiable op of the engine.

How to run (from the project root; needs Debian's python3-torch and python3-numpy,
no pip packages):

    python3 tests/reference/make_op_fixtures.py

(if `python3` is not the system one, e.g. under pyenv, run /usr/bin/python3.)
It rewrites tests/fixtures/ops/*.safetensors, one file per case, which are
committed; tests/autograd/test_torch_parity.cpp loads each one, runs the same op
through tg and compares. The script is deterministic: each case draws its
inputs from a generator seeded with a hash of the case's name, so re-running it
gives byte-identical files, and adding a case does not change the others.

What a file holds (see safetensors_io.py for the format):
  in.<name>     the op's inputs, contiguous, in the order listed by metadata "inputs"
  out.<i>       the op's outputs (most ops have one; max and split have several)
  w.<i>         a fixed random weight for each floating output: the test
                backpropagates loss = sum_i sum(out.<i> * w.<i>)
  grad.<name>   d loss / d input, for the inputs listed in metadata "grad_inputs"
and metadata:
  op            the key of the op in the C++ table (TORCH_OPS below mirrors it)
  inputs, grad_inputs   comma-separated input names
  layout.<name> "transposed" or "sliced": the C++ test makes that input a
                non-contiguous leaf holding the same values (a transposed view of
                a contiguous buffer, or every other column of a buffer twice as
                wide). PyTorch's results do not depend on the layout, so only the
                metadata records it.
  params        the op's arguments as a JSON object, e.g. {"dims": [0, 2], "keepdim": true}
"""
import json
import os
import sys
import zlib

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

OUTPUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures", "ops")
F = torch.nn.functional


def all_dims_if_empty(x, dims):
    """The engine reads an empty dims list as "every dim" (as torch.sum(x) does)."""
    return tuple(dims) if dims else tuple(range(x.dim()))


def slice_along(x, dim, start, end, step):
    index = [slice(None)] * x.dim()
    index[dim] = slice(start, end, step)
    return x[tuple(index)]


# The torch version of each op of the C++ table, called as fn(inputs, params)
# with the inputs in order; returns a list of outputs.
TORCH_OPS = {
    # elementwise, binary and unary
    "add": lambda t, p: [t[0] + t[1]],
    "sub": lambda t, p: [t[0] - t[1]],
    "mul": lambda t, p: [t[0] * t[1]],
    "div": lambda t, p: [t[0] / t[1]],
    "pow": lambda t, p: [torch.pow(t[0], t[1])],
    "pow_scalar": lambda t, p: [torch.pow(t[0], p["exponent"])],
    "add_scalar": lambda t, p: [t[0] + p["scalar"]],
    "sub_scalar": lambda t, p: [t[0] - p["scalar"]],
    "mul_scalar": lambda t, p: [t[0] * p["scalar"]],
    "div_scalar": lambda t, p: [t[0] / p["scalar"]],
    "scalar_add": lambda t, p: [p["scalar"] + t[0]],
    "scalar_sub": lambda t, p: [p["scalar"] - t[0]],
    "scalar_mul": lambda t, p: [p["scalar"] * t[0]],
    "scalar_div": lambda t, p: [p["scalar"] / t[0]],
    "operators": lambda t, p: [(t[0] + t[1]) * (t[0] - t[1]) / (t[1] * t[1] + 1.0) - (-t[0])],
    "neg": lambda t, p: [-t[0]],
    "exp": lambda t, p: [torch.exp(t[0])],
    "log": lambda t, p: [torch.log(t[0])],
    "sqrt": lambda t, p: [torch.sqrt(t[0])],
    "tanh": lambda t, p: [torch.tanh(t[0])],
    "where": lambda t, p: [torch.where(t[0], t[1], t[2])],
    "masked_fill": lambda t, p: [t[0].masked_fill(t[1], float(p["value"]))],
    "eq": lambda t, p: [torch.eq(t[0], t[1])],
    "ne": lambda t, p: [torch.ne(t[0], t[1])],
    "lt": lambda t, p: [torch.lt(t[0], t[1])],
    "le": lambda t, p: [torch.le(t[0], t[1])],
    "gt": lambda t, p: [torch.gt(t[0], t[1])],
    "ge": lambda t, p: [torch.ge(t[0], t[1])],
    # reductions and softmax
    "sum": lambda t, p: [t[0].sum(dim=all_dims_if_empty(t[0], p["dims"]), keepdim=p["keepdim"])],
    "mean": lambda t, p: [t[0].mean(dim=all_dims_if_empty(t[0], p["dims"]), keepdim=p["keepdim"])],
    "var": lambda t, p: [
        t[0].var(dim=all_dims_if_empty(t[0], p["dims"]), unbiased=p["unbiased"], keepdim=p["keepdim"])
    ],
    "max": lambda t, p: list(torch.max(t[0], p["dim"], keepdim=p["keepdim"])),
    "argmax": lambda t, p: [torch.argmax(t[0], p["dim"], keepdim=p["keepdim"])],
    "softmax": lambda t, p: [torch.softmax(t[0], p["dim"])],
    "log_softmax": lambda t, p: [torch.log_softmax(t[0], p["dim"])],
    # matrix product
    "matmul": lambda t, p: [torch.matmul(t[0], t[1])],
    # indexing, joining, splitting
    "index_select": lambda t, p: [torch.index_select(t[0], p["dim"], t[1])],
    "gather": lambda t, p: [torch.gather(t[0], p["dim"], t[1])],
    "embedding": lambda t, p: [F.embedding(t[1], t[0])],
    "cat": lambda t, p: [torch.cat(t, p["dim"])],
    "split_sizes": lambda t, p: list(torch.split(t[0], p["sizes"], p["dim"])),
    "split_chunk": lambda t, p: list(torch.split(t[0], p["chunk"], p["dim"])),
    # views
    "view": lambda t, p: [t[0].view(p["shape"])],
    "reshape": lambda t, p: [t[0].reshape(p["shape"])],
    "transpose": lambda t, p: [t[0].transpose(p["dim0"], p["dim1"])],
    "permute": lambda t, p: [t[0].permute(p["dims"])],
    "slice": lambda t, p: [slice_along(t[0], p["dim"], p["start"], p["end"], p["step"])],
    "narrow": lambda t, p: [t[0].narrow(p["dim"], p["start"], p["length"])],
    "select": lambda t, p: [t[0].select(p["dim"], p["index"])],
    "squeeze": lambda t, p: [t[0].squeeze(p["dim"])],
    "unsqueeze": lambda t, p: [t[0].unsqueeze(p["dim"])],
    "expand": lambda t, p: [t[0].expand(p["shape"])],
    "contiguous": lambda t, p: [t[0].contiguous()],
    "clone": lambda t, p: [t[0].clone()],
    "to_float64": lambda t, p: [t[0].double()],
    # compositions: views feeding reductions, and small pieces of a transformer
    "transpose_sum": lambda t, p: [t[0].transpose(0, 1).sum(dim=(1,))],
    "views_sum": lambda t, p: [
        slice_along(t[0].transpose(0, 1), 0, 1, 4, 2).unsqueeze(0).expand(3, -1, -1).sum(dim=(0, 2))
    ],
    "permute_reshape_mean": lambda t, p: [t[0].permute(2, 0, 1).reshape(4, 6).mean(dim=(1,), keepdim=True)],
    "expand_mul_sum": lambda t, p: [(t[0].expand(2, 3, 4) * t[1]).sum(dim=(0,))],
    "select_narrow_softmax": lambda t, p: [torch.softmax(t[0].select(0, 1).narrow(1, 1, 3), -1)],
    "layer_norm": lambda t, p: [
        (t[0] - t[0].mean(dim=(-1,), keepdim=True))
        / torch.sqrt(t[0].var(dim=(-1,), unbiased=False, keepdim=True) + 1e-5)
        * t[1]
        + t[2]
    ],
    "cross_entropy": lambda t, p: [
        -torch.gather(torch.log_softmax(t[0], 1), 1, t[1].unsqueeze(1)).mean(dim=(0, 1))
    ],
    "attention": lambda t, p: [
        torch.matmul(
            torch.softmax(
                (torch.matmul(t[0], t[1].transpose(-2, -1)) * p["scale"]).masked_fill(t[3], float(p["value"])), -1
            ),
            t[2],
        )
    ],
    "mlp": lambda t, p: [torch.matmul(torch.tanh(torch.matmul(t[0], t[1]) + t[2]), t[3])],
}


class Case:
    """One fixture: an op of TORCH_OPS applied to named inputs."""

    def __init__(self, name, op, inputs, params=None, layout=None, grad=None):
        self.name, self.op = name, op
        self.inputs = inputs  # [(name, spec)] where spec is a shape tuple (random floats) or an array
        self.params = params or {}
        self.layout = layout or {}
        self.grad = grad  # names of the inputs that get gradients (default: every float input)


def random_floats(generator, shape, low, high, dtype):
    return torch.rand(shape, generator=generator, dtype=torch.float64).mul(high - low).add(low).to(dtype)


def build_inputs(case, generator):
    tensors = []
    for input_name, spec in case.inputs:
        if isinstance(spec, tuple):  # a shape: uniform floats in [-1, 1)
            tensors.append(random_floats(generator, spec, -1.0, 1.0, torch.float32))
        elif isinstance(spec, dict):  # {"shape": ..., "low": ..., "high": ..., "dtype": ...}
            dtype = torch.float64 if spec.get("dtype") == "float64" else torch.float32
            tensors.append(random_floats(generator, spec["shape"], spec.get("low", -1.0), spec.get("high", 1.0), dtype))
        else:  # explicit values (indices, masks)
            tensors.append(torch.from_numpy(np.array(spec)))
    return tensors


def make_fixture(case):
    generator = torch.Generator().manual_seed(zlib.crc32(case.name.encode()))
    values = build_inputs(case, generator)
    names = [input_name for input_name, _ in case.inputs]
    grad_names = case.grad if case.grad is not None else [n for n, v in zip(names, values) if v.is_floating_point()]
    leaves = [v.clone().requires_grad_(n in grad_names) for n, v in zip(names, values)]

    outputs = TORCH_OPS[case.op](leaves, case.params)
    loss = 0
    tensors = [(f"in.{n}", v.numpy()) for n, v in zip(names, values)]
    for i, output in enumerate(outputs):
        tensors.append((f"out.{i}", output.detach().contiguous().numpy()))
        if output.is_floating_point():
            weight = random_floats(generator, output.shape, -1.0, 1.0, output.dtype)
            tensors.append((f"w.{i}", weight.numpy()))
            loss = loss + (output * weight).sum()
    if torch.is_tensor(loss):  # comparisons and argmax have no floating output, so no gradient
        loss.backward()
    for n, leaf in zip(names, leaves):
        if n in grad_names:
            grad = leaf.grad if leaf.grad is not None else torch.zeros_like(leaf)
            tensors.append((f"grad.{n}", grad.numpy()))

    metadata = {
        "op": case.op,
        "inputs": ",".join(names),
        "grad_inputs": ",".join(grad_names),
        "params": json.dumps(case.params, sort_keys=True),
        "torch_version": torch.__version__,
    }
    for input_name, layout in case.layout.items():
        metadata[f"layout.{input_name}"] = layout
    safetensors_io.write(os.path.join(OUTPUT_DIR, f"{case.name}.safetensors"), tensors, metadata)


def positive(shape, low=0.5, high=2.0):
    return {"shape": shape, "low": low, "high": high}


def cases():
    result = []
    add = result.append

    # ---- elementwise binary: same shape, broadcast both ways, non-contiguous operands
    for op in ["add", "sub", "mul", "div"]:
        denominator = positive if op == "div" else (lambda shape: shape)
        add(Case(f"{op}_same_shape", op, [("x", (3, 4)), ("y", denominator((3, 4)))]))
        add(Case(f"{op}_broadcast", op, [("x", (2, 3, 4)), ("y", denominator((3, 1)))]))
        add(Case(f"{op}_broadcast_both", op, [("x", (4,)), ("y", denominator((3, 1)))]))
        add(Case(f"{op}_noncontiguous", op, [("x", (3, 4)), ("y", denominator((3, 4)))],
                 layout={"x": "transposed", "y": "sliced"}))
    add(Case("pow_same_shape", "pow", [("x", positive((3, 4))), ("y", (3, 4))]))
    add(Case("pow_broadcast", "pow", [("x", positive((2, 3))), ("y", (3,))], layout={"x": "transposed"}))
    for name, exponent in [("square", 2.0), ("cube", 3.0), ("half", 0.5), ("inverse_sqrt", -0.5)]:
        add(Case(f"pow_scalar_{name}", "pow_scalar", [("x", positive((3, 4)))], {"exponent": exponent}))
    for op in ["add_scalar", "sub_scalar", "mul_scalar", "scalar_add", "scalar_sub", "scalar_mul"]:
        add(Case(op, op, [("x", (3, 4))], {"scalar": 1.75}))
    add(Case("div_scalar", "div_scalar", [("x", (3, 4))], {"scalar": -2.5}))
    add(Case("scalar_div", "scalar_div", [("x", positive((3, 4)))], {"scalar": 1.5}))
    add(Case("operators", "operators", [("x", (2, 3)), ("y", (3,))]))

    # ---- elementwise unary
    add(Case("neg", "neg", [("x", (3, 4))]))
    add(Case("exp", "exp", [("x", (3, 4))], layout={"x": "transposed"}))
    add(Case("log", "log", [("x", positive((3, 4), 0.1, 3.0))]))
    add(Case("sqrt", "sqrt", [("x", positive((3, 4), 0.1, 3.0))], layout={"x": "sliced"}))
    add(Case("tanh", "tanh", [("x", {"shape": (2, 3, 4), "low": -3.0, "high": 3.0})]))
    add(Case("tanh_float64", "tanh", [("x", {"shape": (3, 4), "dtype": "float64"})]))

    # ---- where, masked_fill, comparisons
    mask_3x4 = [[True, False, True, False], [False, False, True, True], [True, True, False, False]]
    add(Case("where", "where", [("condition", mask_3x4), ("a", (3, 4)), ("b", (3, 4))]))
    add(Case("where_broadcast", "where", [("condition", [True, False, False, True]), ("a", (3, 1)), ("b", (3, 4))],
             layout={"b": "transposed"}))
    add(Case("masked_fill", "masked_fill", [("x", (3, 4)), ("mask", mask_3x4)], {"value": -3.5}))
    add(Case("masked_fill_broadcast", "masked_fill", [("x", (2, 3, 4)), ("mask", [[True], [False], [True]])],
             {"value": 0.0}, layout={"x": "sliced"}))
    with_ties_x = [[0.5, -1.0, 2.0, 0.0], [1.0, 1.0, -2.0, 3.0], [0.25, 0.0, 4.0, -0.5]]
    with_ties_y = [0.5, 1.0, 4.0, -0.5]
    for op in ["eq", "ne", "lt", "le", "gt", "ge"]:
        add(Case(f"{op}_broadcast", op,
                 [("x", np.array(with_ties_x, dtype=np.float32)), ("y", np.array(with_ties_y, dtype=np.float32))],
                 grad=[]))

    # ---- reductions
    for op in ["sum", "mean"]:
        add(Case(f"{op}_all", op, [("x", (3, 4))], {"dims": [], "keepdim": False}))
        add(Case(f"{op}_all_keepdim", op, [("x", (2, 3, 4))], {"dims": [], "keepdim": True}))
        add(Case(f"{op}_dim1", op, [("x", (3, 4))], {"dims": [1], "keepdim": False}))
        add(Case(f"{op}_dims02_keepdim", op, [("x", (2, 3, 4))], {"dims": [0, 2], "keepdim": True}))
        add(Case(f"{op}_last_noncontiguous", op, [("x", (4, 5))], {"dims": [-1], "keepdim": False},
                 layout={"x": "transposed"}))
    add(Case("var_all", "var", [("x", (3, 4))], {"dims": [], "unbiased": True, "keepdim": False}))
    add(Case("var_dim1", "var", [("x", (3, 5))], {"dims": [1], "unbiased": True, "keepdim": False}))
    add(Case("var_biased_keepdim", "var", [("x", (2, 3, 4))], {"dims": [-1], "unbiased": False, "keepdim": True}))
    add(Case("var_dims01_noncontiguous", "var", [("x", (2, 3, 4))], {"dims": [0, 1], "unbiased": True,
                                                                     "keepdim": False}, layout={"x": "sliced"}))
    add(Case("max_dim0", "max", [("x", (3, 4))], {"dim": 0, "keepdim": False}))
    add(Case("max_last_keepdim", "max", [("x", (2, 3, 5))], {"dim": -1, "keepdim": True}))
    add(Case("max_noncontiguous", "max", [("x", (4, 3))], {"dim": 1, "keepdim": False}, layout={"x": "transposed"}))
    add(Case("argmax_dim1", "argmax", [("x", (3, 5))], {"dim": 1, "keepdim": False}, grad=[]))
    add(Case("argmax_dim0_keepdim", "argmax", [("x", (2, 3, 4))], {"dim": 0, "keepdim": True}, grad=[]))

    # ---- softmax
    for op in ["softmax", "log_softmax"]:
        add(Case(f"{op}_last", op, [("x", {"shape": (3, 5), "low": -4.0, "high": 4.0})], {"dim": -1}))
        add(Case(f"{op}_dim0", op, [("x", (4, 3))], {"dim": 0}))
        add(Case(f"{op}_middle_3d", op, [("x", (2, 3, 4))], {"dim": 1}))
        add(Case(f"{op}_noncontiguous", op, [("x", (3, 4))], {"dim": -1}, layout={"x": "transposed"}))
    add(Case("softmax_large_logits", "softmax", [("x", {"shape": (2, 6), "low": 50.0, "high": 90.0})], {"dim": 1}))
    add(Case("log_softmax_float64", "log_softmax", [("x", {"shape": (3, 4), "dtype": "float64"})], {"dim": 1}))

    # ---- matmul
    add(Case("matmul_2d", "matmul", [("a", (3, 4)), ("b", (4, 5))]))
    add(Case("matmul_batched", "matmul", [("a", (2, 3, 4)), ("b", (2, 4, 5))]))
    add(Case("matmul_batch_broadcast", "matmul", [("a", (2, 3, 4)), ("b", (4, 5))]))
    add(Case("matmul_batch_broadcast_both", "matmul", [("a", (2, 1, 3, 4)), ("b", (3, 4, 2))]))
    add(Case("matmul_transposed_a", "matmul", [("a", (3, 4)), ("b", (4, 5))], layout={"a": "transposed"}))
    add(Case("matmul_transposed_b", "matmul", [("a", (2, 3, 4)), ("b", (4, 5))], layout={"b": "transposed"}))
    add(Case("matmul_sliced", "matmul", [("a", (3, 4)), ("b", (4, 2))], layout={"a": "sliced", "b": "sliced"}))
    add(Case("matmul_vector_matrix", "matmul", [("a", (4,)), ("b", (4, 3))]))
    add(Case("matmul_matrix_vector", "matmul", [("a", (3, 4)), ("b", (4,))]))
    add(Case("matmul_vector_vector", "matmul", [("a", (5,)), ("b", (5,))]))
    add(Case("matmul_batched_vector", "matmul", [("a", (2, 3, 4)), ("b", (4,))]))
    add(Case("matmul_vector_batched", "matmul", [("a", (4,)), ("b", (2, 4, 3))]))
    add(Case("matmul_float64", "matmul", [("a", {"shape": (3, 4), "dtype": "float64"}),
                                          ("b", {"shape": (4, 2), "dtype": "float64"})]))

    # ---- indexing, joining, splitting (repeated indices must add up in the gradient)
    add(Case("index_select_dim0", "index_select", [("x", (4, 3)), ("index", np.array([2, 0, 2], dtype=np.int64))],
             {"dim": 0}))
    add(Case("index_select_dim1", "index_select", [("x", (2, 5)), ("index", np.array([4, 1, 1, 0], dtype=np.int64))],
             {"dim": 1}, layout={"x": "transposed"}))
    add(Case("gather_dim1", "gather", [("x", (3, 4)), ("index", np.array([[0, 3], [1, 1], [2, 0]], dtype=np.int64))],
             {"dim": 1}))
    add(Case("gather_dim0", "gather",
             [("x", (3, 4)), ("index", np.array([[2, 0, 1, 2], [2, 2, 0, 1]], dtype=np.int64))], {"dim": 0},
             layout={"x": "sliced"}))
    add(Case("embedding", "embedding", [("table", (5, 4)), ("ids", np.array([[1, 3, 1], [0, 4, 1]], dtype=np.int64))]))
    add(Case("cat_dim0", "cat", [("x0", (2, 3)), ("x1", (1, 3)), ("x2", (3, 3))], {"dim": 0}))
    add(Case("cat_last", "cat", [("x0", (2, 3, 1)), ("x1", (2, 3, 2))], {"dim": -1}, layout={"x1": "transposed"}))
    add(Case("split_sizes", "split_sizes", [("x", (6, 3))], {"sizes": [1, 3, 2], "dim": 0}))
    add(Case("split_chunk", "split_chunk", [("x", (2, 7))], {"chunk": 3, "dim": 1}))

    # ---- views (the weight w makes every output element count in the gradient)
    add(Case("view", "view", [("x", (3, 4))], {"shape": [2, -1, 3]}))
    add(Case("reshape_contiguous", "reshape", [("x", (2, 3, 4))], {"shape": [6, 4]}))
    add(Case("reshape_copies", "reshape", [("x", (3, 4))], {"shape": [12]}, layout={"x": "transposed"}))
    add(Case("transpose", "transpose", [("x", (2, 3, 4))], {"dim0": 0, "dim1": 2}))
    add(Case("permute", "permute", [("x", (2, 3, 4))], {"dims": [1, 2, 0]}))
    add(Case("slice_step", "slice", [("x", (5, 4))], {"dim": 0, "start": 1, "end": 5, "step": 2}))
    add(Case("slice_negative", "slice", [("x", (3, 6))], {"dim": -1, "start": -4, "end": -1, "step": 1},
             layout={"x": "transposed"}))
    add(Case("narrow", "narrow", [("x", (3, 5))], {"dim": 1, "start": 1, "length": 3}))
    add(Case("select", "select", [("x", (2, 3, 4))], {"dim": 1, "index": 2}))
    add(Case("select_negative", "select", [("x", (4, 3))], {"dim": 0, "index": -1}, layout={"x": "sliced"}))
    add(Case("squeeze", "squeeze", [("x", (3, 1, 4))], {"dim": 1}))
    add(Case("unsqueeze", "unsqueeze", [("x", (3, 4))], {"dim": -1}))
    add(Case("expand", "expand", [("x", (3, 1))], {"shape": [2, 3, 4]}))
    add(Case("expand_keep", "expand", [("x", (1, 4))], {"shape": [3, -1]}))
    add(Case("contiguous", "contiguous", [("x", (3, 4))], layout={"x": "transposed"}))
    add(Case("clone", "clone", [("x", (3, 4))], layout={"x": "sliced"}))
    add(Case("to_float64", "to_float64", [("x", (3, 4))]))

    # ---- compositions
    add(Case("transpose_sum", "transpose_sum", [("x", (3, 4))]))
    add(Case("views_sum", "views_sum", [("x", (3, 5))]))
    add(Case("permute_reshape_mean", "permute_reshape_mean", [("x", (2, 3, 4))]))
    add(Case("expand_mul_sum", "expand_mul_sum", [("x", (3, 1)), ("y", (2, 3, 4))]))
    add(Case("select_narrow_softmax", "select_narrow_softmax", [("x", (2, 3, 5))], layout={"x": "transposed"}))
    add(Case("layer_norm", "layer_norm", [("x", (2, 3, 8)), ("gain", (8,)), ("bias", (8,))]))
    add(Case("cross_entropy", "cross_entropy",
             [("logits", {"shape": (4, 6), "low": -3.0, "high": 3.0}), ("targets", np.array([5, 0, 2, 2], np.int64))]))
    causal = np.triu(np.ones((4, 4), dtype=bool), k=1)  # True above the diagonal: the future is masked
    add(Case("attention", "attention", [("q", (2, 4, 8)), ("k", (2, 4, 8)), ("v", (2, 4, 8)), ("mask", causal)],
             {"scale": 8 ** -0.5, "value": "-inf"}))
    add(Case("mlp", "mlp", [("x", (5, 4)), ("w1", (4, 6)), ("b1", (6,)), ("w2", (6, 3))], layout={"w2": "transposed"}))
    return result


def main():
    os.makedirs(OUTPUT_DIR, exist_ok=True)
    for stale in os.listdir(OUTPUT_DIR):
        if stale.endswith(".safetensors"):
            os.remove(os.path.join(OUTPUT_DIR, stale))
    all_cases = cases()
    names = [case.name for case in all_cases]
    assert len(names) == len(set(names)), "duplicate case names"
    for case in all_cases:
        assert case.op in TORCH_OPS, case.op
        make_fixture(case)
    print(f"wrote {len(all_cases)} fixtures to {os.path.normpath(OUTPUT_DIR)}")


if __name__ == "__main__":
    torch.set_num_threads(1)  # one summation order, whatever the machine
    main()
