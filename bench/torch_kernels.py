"""PyTorch's equivalents of bench/bench_kernels.cpp, same shapes, same rate units.

Prints one JSON object per line: {"name": "attention_fwd/baby", "ms": ..., "rate": ..., "unit": ...}
(ms is the median over repetitions). bench/run_kernels.sh runs this alternately
with bench_kernels and prints the comparison; run it with Debian's python3 (torch 1.13):
    OMP_NUM_THREADS=2 LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-openmp /usr/bin/python3 bench/torch_kernels.py
torch 1.13 has no scaled_dot_product_attention, so attention is the explicit
masked-softmax composition nanoGPT uses.
"""
import argparse
import json
import math
import statistics
import time

import torch
import torch.nn.functional as F

SHAPES = {  # name: (B, T, C, NH, V, layers)
    "cpu-small": (12, 64, 128, 4, 65, 4),
    "baby": (64, 256, 384, 6, 65, 6),
}


def timed(fn, min_time):
    """Median milliseconds of fn() over repetitions filling about min_time seconds."""
    fn()  # warm-up
    times = []
    start = time.perf_counter()
    while time.perf_counter() - start < min_time or len(times) < 3:
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def qkv_leaves(B, T, C, NH):
    qkv = torch.randn(B, T, 3, NH, C // NH)
    return [qkv[:, :, i].permute(0, 2, 1, 3).detach().requires_grad_() for i in range(3)]


def attention(q, k, v, mask):
    B, NH, T, HS = q.shape
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(HS))
    att = att.masked_fill(mask[:, :, :T, :T] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return (att @ v).transpose(1, 2).contiguous().view(B, T, NH * HS)


def forward_backward(make_output, leaves, grad_output=None):
    def run():
        for leaf in leaves:
            leaf.grad = None
        out = make_output()
        out.backward(grad_output)
    return run


def no_grad(make_output):
    def run():
        with torch.no_grad():
            make_output()
    return run


def gpt_parameters(B, T, C, NH, V, layers):
    """The parameter tensors of a GPT-2-style model (tied LM head), as torch.optim sees them."""
    sizes = [(V, C), (T, C)]
    for _ in range(layers):
        sizes += [(C,), (C,), (3 * C, C), (3 * C,), (C, C), (C,), (C,), (C,), (4 * C, C), (4 * C,), (C, 4 * C), (C,)]
    sizes += [(C,), (C,)]
    return [torch.full(size, 0.5, requires_grad=True) for size in sizes]


def run_shape(name, shape, min_time, only):
    B, T, C, NH, V, layers = shape
    HS = C // NH
    results = []

    def report(kernel, fn, work, unit):
        if only and not any(o in kernel for o in only):
            return
        ms = timed(fn, min_time)
        results.append({"name": f"{kernel}/{name}", "ms": ms, "rate": work / (ms * 1e-3) * 1e-9, "unit": unit})

    q, k, v = qkv_leaves(B, T, C, NH)
    mask = torch.tril(torch.ones(T, T)).view(1, 1, T, T)
    dy = torch.randn(B, T, C)
    dense_flops = 4.0 * B * NH * T * T * HS
    report("attention_fwd", no_grad(lambda: attention(q, k, v, mask)), dense_flops, "GFLOP/s")
    report("attention_fwd_bwd", forward_backward(lambda: attention(q, k, v, mask), [q, k, v], dy), 3 * dense_flops, "GFLOP/s")

    x = torch.randn(B, T, C, requires_grad=True)
    weight = torch.randn(C, requires_grad=True)
    bias = torch.randn(C, requires_grad=True)
    ln = lambda: F.layer_norm(x, (C,), weight, bias, 1e-5)
    report("layer_norm_fwd", no_grad(ln), 2 * 4.0 * x.numel(), "GB/s")
    report("layer_norm_fwd_bwd", forward_backward(ln, [x, weight, bias], dy), 5 * 4.0 * x.numel(), "GB/s")

    hidden = torch.randn(B, T, 4 * C, requires_grad=True)
    dhidden = torch.randn(B, T, 4 * C)
    gelu = lambda: F.gelu(hidden, approximate="tanh")
    report("gelu_fwd", no_grad(gelu), 2 * 4.0 * hidden.numel(), "GB/s")
    report("gelu_fwd_bwd", forward_backward(gelu, [hidden], dhidden), 5 * 4.0 * hidden.numel(), "GB/s")

    logits = (2 * torch.randn(B * T, V)).requires_grad_()
    targets = torch.randint(0, V, (B * T,))
    ce = lambda: F.cross_entropy(logits, targets)
    report("cross_entropy_fwd", no_grad(ce), 4.0 * logits.numel(), "GB/s")
    report("cross_entropy_fwd_bwd", forward_backward(ce, [logits]), 3 * 4.0 * logits.numel(), "GB/s")

    params = gpt_parameters(*shape)
    for p in params:
        p.grad = torch.full_like(p, 0.01)
    optimizer = torch.optim.AdamW(params, lr=1e-3, weight_decay=0.1, foreach=False)
    count = sum(p.numel() for p in params)
    report("adamw_step", optimizer.step, 7 * 4.0 * count, "GB/s")
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--min-time", type=float, default=1.0, help="seconds per benchmark")
    parser.add_argument("--only", nargs="*", default=[], help="run kernels whose name contains one of these")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    for name, shape in SHAPES.items():
        for result in run_shape(name, shape, args.min_time, args.only):
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
