"""Batch-1 inference of a GPT in PyTorch, the figures bench/bench_gpt2_inference.cpp
measures in tinygpt, on the same weights:

    /usr/bin/python3 bench/torch_gpt2_inference.py --weights FILE --tokens 32 --threads 2

FILE is what `bench_gpt2_inference --save-weights FILE` wrote: the randomly
initialised tinygpt model under tinygpt's parameter names (Linear weights (out, in),
as torch.nn.Linear), its config and the prompt in the metadata.

The model is GPT-2's architecture written here in the style of nanoGPT, with
eager attention (torch 1.13 has no fused scaled_dot_product_attention) and its
own KV cache: one preallocated (1, NH, capacity, HS) buffer per layer for keys
and one for values, written in place; a step attends over the filled part.
Generation is greedy. As in nanoGPT's generate, the LM head runs on the last
position only; the forward timing computes the logits of every position, as
tinygpt's forward does. Prints one JSON line like the C++ side's.
"""
import argparse
import json
import math
import os
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "reference"))
import safetensors_io  # noqa: E402


class Attention(nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(channels, 3 * channels)
        self.c_proj = nn.Linear(channels, channels)

    # x (1, Tnew, C); cache = (keys, values) each (1, NH, capacity, HS), `start` filled.
    def forward(self, x, cache=None, start=0):
        batch, new, channels = x.shape
        head_size = channels // self.heads
        q, k, v = self.qkv(x).split(channels, dim=2)
        q, k, v = (t.view(batch, new, self.heads, head_size).transpose(1, 2) for t in (q, k, v))
        if cache is not None:
            cache[0][:, :, start : start + new] = k
            cache[1][:, :, start : start + new] = v
            k, v = cache[0][:, :, : start + new], cache[1][:, :, : start + new]
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_size)  # (1, NH, Tnew, Tk)
        if new > 1:  # query i sits at position start + i and sees keys 0..start + i
            visible = torch.ones(new, start + new, dtype=torch.bool).tril(diagonal=start)
            scores = scores.masked_fill(~visible, float("-inf"))
        heads = torch.softmax(scores, dim=-1) @ v
        return self.c_proj(heads.transpose(1, 2).reshape(batch, new, channels))


class MLP(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.c_fc = nn.Linear(channels, 4 * channels)
        self.c_proj = nn.Linear(4 * channels, channels)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, channels, heads):
        super().__init__()
        self.ln_1 = nn.LayerNorm(channels)
        self.attn = Attention(channels, heads)
        self.ln_2 = nn.LayerNorm(channels)
        self.mlp = MLP(channels)

    def forward(self, x, cache=None, start=0):
        x = x + self.attn(self.ln_1(x), cache, start)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    def __init__(self, layers, heads, channels, vocab, block):
        super().__init__()
        self.heads, self.block = heads, block
        self.wte = nn.Embedding(vocab, channels)
        self.wpe = nn.Embedding(block, channels)
        self.blocks = nn.ModuleList(Block(channels, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(channels)

    # ids (1, Tnew) at positions start..; caches: one (keys, values) per layer or None.
    # last_only: the logits of the last position only (1, 1, V), else (1, Tnew, V).
    def forward(self, ids, caches=None, start=0, last_only=False):
        x = self.wte(ids) + self.wpe(torch.arange(start, start + ids.shape[1]))
        for layer, block in enumerate(self.blocks):
            x = block(x, caches[layer] if caches else None, start)
        x = self.ln_f(x[:, -1:] if last_only else x)
        return x @ self.wte.weight.t()  # tied head

    def make_caches(self, capacity):
        channels = self.wte.weight.shape[1]
        shape = (1, self.heads, capacity, channels // self.heads)
        return [(torch.empty(shape), torch.empty(shape)) for _ in self.blocks]


def generate(model, prompt, tokens, use_cache, on_token):
    context = list(prompt)
    caches = model.make_caches(len(prompt) + tokens) if use_cache else None
    fed = 0
    for _ in range(tokens):
        if use_cache:
            logits = model(torch.tensor([context[fed:]]), caches, fed, last_only=True)
            fed = len(context)
        else:
            logits = model(torch.tensor([context[-model.block :]]), last_only=True)
        context.append(int(logits[0, -1].argmax()))
        on_token()
    return context[len(prompt) :]


def generation_figures(model, prompt, tokens, use_cache, runs):
    generate(model, prompt, min(tokens, 4), use_cache, lambda: None)  # warm-up
    decode, total, prefill = [], [], []
    for _ in range(runs):
        arrivals = []
        start = time.perf_counter()
        generated = generate(model, prompt, tokens, use_cache, lambda: arrivals.append(time.perf_counter()))
        decode.append((tokens - 1) / (arrivals[-1] - arrivals[0]))
        total.append(tokens / (arrivals[-1] - start))
        prefill.append((arrivals[0] - start) * 1e3)
    return {"decode_tokens_per_s": statistics.median(decode), "tokens_per_s_with_prefill": statistics.median(total),
            "prefill_ms": statistics.median(prefill), "tokens": generated}


def forward_figures(model, prompt, iters):
    ids = torch.tensor([prompt])
    logits = model(ids)  # warm-up
    milliseconds = []
    for _ in range(iters):
        start = time.perf_counter()
        logits = model(ids)
        milliseconds.append((time.perf_counter() - start) * 1e3)
    ms = statistics.median(milliseconds)
    return {"ms": ms, "tokens_per_s": len(prompt) / (ms / 1e3), "last_logits_head": logits[0, -1, :4].tolist()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--weights", required=True, help="written by bench_gpt2_inference --save-weights")
    parser.add_argument("--tokens", type=int, default=32)
    parser.add_argument("--forward-iters", type=int, default=10)
    parser.add_argument("--cached-runs", type=int, default=3)
    parser.add_argument("--uncached-runs", type=int, default=1)
    parser.add_argument("--modes", default="forward,cached,uncached")
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    tensors, metadata = safetensors_io.read(args.weights)
    config = json.loads(metadata["config"])
    prompt = [int(token) for token in metadata["prompt"].split(",")]
    model = GPT(config["n_layer"], config["n_head"], config["n_embd"], config["vocab_size"], config["block_size"])
    model.load_state_dict({name: torch.from_numpy(array) for name, array in tensors.items()})
    model.eval()

    modes = args.modes.split(",")
    result = {"side": "torch", "torch": torch.__version__, "config": config["preset"],
              "parameters": sum(p.numel() for p in model.parameters()), "prompt": len(prompt),
              "new_tokens": args.tokens, "threads": torch.get_num_threads()}
    with torch.inference_mode():
        if "forward" in modes:
            result["forward"] = forward_figures(model, prompt, args.forward_iters)
        if "uncached" in modes:
            result["uncached"] = generation_figures(model, prompt, args.tokens, False, args.uncached_runs)
        if "cached" in modes:
            result["cached"] = generation_figures(model, prompt, args.tokens, True, args.cached_runs)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
