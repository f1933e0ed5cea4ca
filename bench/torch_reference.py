"""One GPT training step in PyTorch (forward, backward, AdamW), the same step
bench/bench_train_step.cpp times in tinygpt, for a side-by-side comparison.

    /usr/bin/python3 bench/torch_reference.py --config cpu-small --batch 4 --block 64 --iters 20 --threads 2

Prints one JSON line like bench_train_step's. The model is written here: GPT-2's
architecture (learned positions, pre-LayerNorm blocks, tanh GELU, tied head), or
for the Llama-style presets the Llama block (RMSNorm, grouped-query attention with
rotate-half RoPE, SwiGLU, no biases, tied head), with eager attention, as torch
1.13 has no fused scaled_dot_product_attention (nor an RMSNorm module).
Run one config per process: peak_rss_mb is the process's max RSS.
"""
import argparse
import json
import math
import resource
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

PRESETS = {  # layers, heads, channels, vocabulary, context (rows of wpe)
    "cpu-small": (4, 4, 128, 65, 64),
    "baby": (6, 6, 384, 65, 256),
    "gpt2": (12, 12, 768, 50257, 1024),
}
LLAMA_PRESETS = {  # layers, heads, KV heads, channels, MLP hidden, vocabulary, RoPE theta (models/gpt_config.cpp)
    "llama-small": (4, 4, 2, 128, 384, 65, 10000.0),
    "smollm2-135m": (30, 9, 3, 576, 1536, 49152, 100000.0),
}


def rms_norm(x, weight, eps=1e-5):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * weight


def rotate_half(x, cos, sin):
    half = x.shape[-1] // 2
    return x * cos + torch.cat([-x[..., half:], x[..., :half]], dim=-1) * sin


class LlamaBlock(nn.Module):
    def __init__(self, channels, heads, kv_heads, hidden):
        super().__init__()
        self.heads, self.kv_heads, self.head_size = heads, kv_heads, channels // heads
        self.ln_1 = nn.Parameter(torch.ones(channels))
        self.qkv = nn.Linear(channels, (heads + 2 * kv_heads) * self.head_size, bias=False)
        self.attn_proj = nn.Linear(channels, channels, bias=False)
        self.ln_2 = nn.Parameter(torch.ones(channels))
        self.c_fc = nn.Linear(channels, 2 * hidden, bias=False)  # [gate | up]
        self.mlp_proj = nn.Linear(hidden, channels, bias=False)

    def forward(self, x, cos, sin):
        batch, time_, channels = x.shape
        hs = self.head_size
        q, k, v = self.qkv(rms_norm(x, self.ln_1)).split([self.heads * hs, self.kv_heads * hs, self.kv_heads * hs], 2)
        q = rotate_half(q.view(batch, time_, self.heads, hs).transpose(1, 2), cos, sin)
        k = rotate_half(k.view(batch, time_, self.kv_heads, hs).transpose(1, 2), cos, sin)
        v = v.view(batch, time_, self.kv_heads, hs).transpose(1, 2)
        k = k.repeat_interleave(self.heads // self.kv_heads, dim=1)
        v = v.repeat_interleave(self.heads // self.kv_heads, dim=1)
        scores = q @ k.transpose(-2, -1) / math.sqrt(hs)
        causal = torch.ones(time_, time_, dtype=torch.bool).tril()
        heads = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v
        x = x + self.attn_proj(heads.transpose(1, 2).reshape(batch, time_, channels))
        gate, up = self.c_fc(rms_norm(x, self.ln_2)).chunk(2, dim=-1)
        return x + self.mlp_proj(F.silu(gate) * up)


class Llama(nn.Module):
    def __init__(self, layers, heads, kv_heads, channels, hidden, vocab, theta):
        super().__init__()
        self.wte = nn.Embedding(vocab, channels)
        self.blocks = nn.ModuleList(LlamaBlock(channels, heads, kv_heads, hidden) for _ in range(layers))
        self.ln_f = nn.Parameter(torch.ones(channels))
        head_size = channels // heads
        self.inverse_frequency = torch.pow(theta, -torch.arange(0, head_size, 2, dtype=torch.float64) / head_size)
        for parameter in self.parameters():
            if parameter.dim() == 2:
                nn.init.normal_(parameter, std=0.02)

    def forward(self, ids, targets):
        angle = torch.arange(ids.shape[1], dtype=torch.float64)[:, None] * self.inverse_frequency[None]
        cos, sin = torch.cat([angle.cos()] * 2, -1).float(), torch.cat([angle.sin()] * 2, -1).float()
        x = self.wte(ids)
        for block in self.blocks:
            x = block(x, cos, sin)
        logits = rms_norm(x, self.ln_f) @ self.wte.weight.t()  # tied head
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


class Block(nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.heads = heads
        self.ln_1 = nn.LayerNorm(channels)
        self.qkv = nn.Linear(channels, 3 * channels)
        self.attn_proj = nn.Linear(channels, channels)
        self.ln_2 = nn.LayerNorm(channels)
        self.c_fc = nn.Linear(channels, 4 * channels)
        self.mlp_proj = nn.Linear(4 * channels, channels)

    def forward(self, x):
        batch, time_, channels = x.shape
        q, k, v = self.qkv(self.ln_1(x)).split(channels, dim=2)
        q, k, v = (t.view(batch, time_, self.heads, channels // self.heads).transpose(1, 2) for t in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(channels // self.heads)
        causal = torch.ones(time_, time_, dtype=torch.bool).tril()
        heads = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1) @ v
        x = x + self.attn_proj(heads.transpose(1, 2).reshape(batch, time_, channels))
        return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))


class GPT(nn.Module):
    def __init__(self, layers, heads, channels, vocab, block):
        super().__init__()
        self.wte = nn.Embedding(vocab, channels)
        self.wpe = nn.Embedding(block, channels)
        self.blocks = nn.ModuleList(Block(channels, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(channels)
        for parameter in self.parameters():
            if parameter.dim() == 2:
                nn.init.normal_(parameter, std=0.02)

    def forward(self, ids, targets):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        logits = self.ln_f(x) @ self.wte.weight.t()  # tied head
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), targets.view(-1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--config", default="cpu-small", choices=sorted(PRESETS) + sorted(LLAMA_PRESETS))
    parser.add_argument("--batch", type=int, default=4)
    parser.add_argument("--block", type=int, default=64)
    parser.add_argument("--iters", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(1)

    if args.config in LLAMA_PRESETS:
        model = Llama(*LLAMA_PRESETS[args.config])
        vocab = LLAMA_PRESETS[args.config][5]
    else:
        layers, heads, channels, vocab, context = PRESETS[args.config]
        model = GPT(layers, heads, channels, vocab, max(context, args.block))
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, betas=(0.9, 0.95), weight_decay=0.1)
    ids = torch.randint(0, vocab, (args.batch, args.block + 1))
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()

    milliseconds = []
    for step in range(args.warmup + args.iters):
        started = time.perf_counter()
        optimizer.zero_grad(set_to_none=False)
        model(inputs, targets).backward()
        optimizer.step()
        if step >= args.warmup:
            milliseconds.append((time.perf_counter() - started) * 1e3)
    median = statistics.median(milliseconds)
    print(json.dumps({
        "impl": "torch", "torch": torch.__version__, "config": args.config,
        "parameters": sum(p.numel() for p in model.parameters()), "batch": args.batch, "block": args.block,
        "threads": torch.get_num_threads(), "ms_median": median, "ms_mean": statistics.mean(milliseconds),
        "tokens_per_s": args.batch * args.block / (median / 1e3),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }))


if __name__ == "__main__":
    main()
