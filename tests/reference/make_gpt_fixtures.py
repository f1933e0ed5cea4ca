"""Writes the whole-model PyTorch fixtures that tests/models/test_torch_gpt_parity.cpp checks.

A tiny GPT (2 layers, 2 heads, 32 channels, vocabulary 65, block 16) is written
here from scratch in PyTorch, independently of the C++ code, once per kind of
positional encoding. Its weights are random with a fixed seed. For a batch of
2 x 16 random ids it records:

    param.<name>    every parameter, under tinygpt's name for it (GPT::named_parameters)
    inputs, targets (B, T) int64
    logits          (B, T, V)
    loss            0-d, mean cross-entropy
    grad.<name>     d loss / d parameter
    updated.<name>  the parameter after clipping the gradients to a global norm of
                    GRAD_CLIP and one AdamW step (weight decay on 2-D weights only)

and, as metadata, the config and optimiser settings the C++ test must use.

Run with Debian's python3 (torch 1.13 + numpy), from the project root:

    /usr/bin/python3 tests/reference/make_gpt_fixtures.py tests/fixtures/gpt

The model follows tinygpt's conventions, which the C++ side must match:
  - Linear weights are (out, in), y = x W^T + b, as in torch.nn.Linear;
  - attention's qkv Linear outputs [q | k | v], each C wide, heads of HS = C / NH
    consecutive channels;
  - GELU is the tanh approximation; LayerNorm eps 1e-5;
  - the output head is tied to the token embedding (logits = x wte^T);
  - sinusoidal: PE[pos, 2i] = sin(pos / 10000^(2i/C)), PE[pos, 2i+1] = cos(same), added to the
    token embeddings; no wpe parameter;
  - rope: q and k of each head rotate their interleaved pairs (x[2i], x[2i+1]) by the
    angle pos * base^(-2i/HS), base 10000; no wpe parameter.
"""
import json
import math
import os
import sys

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_io  # noqa: E402

VOCAB, BLOCK, LAYERS, HEADS, CHANNELS = 65, 16, 2, 2, 32
BATCH, TIME = 2, 16
LR, BETA1, BETA2, EPS, WEIGHT_DECAY = 1e-3, 0.9, 0.99, 1e-8, 0.1
GRAD_CLIP = 0.5  # small enough that these random weights' gradients are clipped
ROPE_BASE = 10000.0
SEED = {"learned": 1001, "sinusoidal": 1002, "rope": 1003}


def parameter_shapes(positional):
    """tinygpt's parameter names and shapes, in registration order."""
    shapes = [("wte.weight", (VOCAB, CHANNELS))]
    if positional == "learned":
        shapes.append(("wpe.weight", (BLOCK, CHANNELS)))
    for layer in range(LAYERS):
        prefix = f"blocks.{layer}."
        shapes += [
            (prefix + "ln_1.weight", (CHANNELS,)),
            (prefix + "ln_1.bias", (CHANNELS,)),
            (prefix + "attn.qkv.weight", (3 * CHANNELS, CHANNELS)),
            (prefix + "attn.qkv.bias", (3 * CHANNELS,)),
            (prefix + "attn.c_proj.weight", (CHANNELS, CHANNELS)),
            (prefix + "attn.c_proj.bias", (CHANNELS,)),
            (prefix + "ln_2.weight", (CHANNELS,)),
            (prefix + "ln_2.bias", (CHANNELS,)),
            (prefix + "mlp.c_fc.weight", (4 * CHANNELS, CHANNELS)),
            (prefix + "mlp.c_fc.bias", (4 * CHANNELS,)),
            (prefix + "mlp.c_proj.weight", (CHANNELS, 4 * CHANNELS)),
            (prefix + "mlp.c_proj.bias", (CHANNELS,)),
        ]
    return shapes + [("ln_f.weight", (CHANNELS,)), ("ln_f.bias", (CHANNELS,))]


def random_parameters(positional, generator):
    """Weights ~ N(0, 0.02^2) as GPT-2 initialises them; biases and LayerNorm
    affine parameters are random too (not 0 and 1), so a mix-up shows."""
    params = {}
    for name, shape in parameter_shapes(positional):
        if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") or name == "ln_f.weight":
            value = 1 + 0.1 * torch.randn(shape, generator=generator)
        elif name.endswith(".bias"):
            value = 0.02 * torch.randn(shape, generator=generator)
        else:
            value = 0.02 * torch.randn(shape, generator=generator)
        params[name] = value.float().requires_grad_(True)
    return params


def sinusoidal_table(time, channels):
    position = torch.arange(time, dtype=torch.float64)[:, None]       # (T, 1)
    two_i = torch.arange(0, channels, 2, dtype=torch.float64)[None]  # (1, C/2)
    angle = position / torch.pow(10000.0, two_i / channels)           # (T, C/2)
    table = torch.zeros(time, channels, dtype=torch.float64)
    table[:, 0::2] = torch.sin(angle)
    table[:, 1::2] = torch.cos(angle)
    return table.float()


def rope(x, base=ROPE_BASE):
    """x (B, NH, T, HS): rotates each interleaved pair (x[2i], x[2i+1]) by pos * base^(-2i/HS)."""
    time, head_size = x.shape[-2], x.shape[-1]
    position = torch.arange(time, dtype=torch.float64)[:, None]                     # (T, 1)
    inverse_frequency = torch.pow(base, -torch.arange(0, head_size, 2, dtype=torch.float64) / head_size)
    angle = position * inverse_frequency[None]                                       # (T, HS/2)
    cos, sin = torch.cos(angle).float(), torch.sin(angle).float()
    even, odd = x[..., 0::2], x[..., 1::2]
    rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1)  # (B, NH, T, HS/2, 2)
    return rotated.flatten(-2)


def forward(params, ids, positional, layers=LAYERS, mlp=True):
    """ids (B, T) -> logits (B, T, V). Without mlp the blocks are attention only (no ln_2,
    no MLP); with an "lm_head.weight" the head is untied (make_course_fixtures.py)."""
    batch, time = ids.shape
    head_size = CHANNELS // HEADS
    x = params["wte.weight"][ids]  # (B, T, C)
    if positional == "learned":
        x = x + params["wpe.weight"][:time]
    elif positional == "sinusoidal":
        x = x + sinusoidal_table(time, CHANNELS)
    for layer in range(layers):
        p = lambda name: params[f"blocks.{layer}.{name}"]  # noqa: E731
        h = F.layer_norm(x, (CHANNELS,), p("ln_1.weight"), p("ln_1.bias"), 1e-5)
        qkv = F.linear(h, p("attn.qkv.weight"), p("attn.qkv.bias"))  # (B, T, 3C)
        q, k, v = (t.view(batch, time, HEADS, head_size).transpose(1, 2) for t in qkv.split(CHANNELS, dim=2))
        if positional == "rope":
            q, k = rope(q), rope(k)
        scores = q @ k.transpose(-2, -1) / math.sqrt(head_size)  # (B, NH, T, T)
        causal = torch.tril(torch.ones(time, time, dtype=torch.bool))
        weights = torch.softmax(scores.masked_fill(~causal, float("-inf")), dim=-1)
        heads = (weights @ v).transpose(1, 2).reshape(batch, time, CHANNELS)
        x = x + F.linear(heads, p("attn.c_proj.weight"), p("attn.c_proj.bias"))
        if not mlp:
            continue
        h = F.layer_norm(x, (CHANNELS,), p("ln_2.weight"), p("ln_2.bias"), 1e-5)
        h = F.gelu(F.linear(h, p("mlp.c_fc.weight"), p("mlp.c_fc.bias")), approximate="tanh")
        x = x + F.linear(h, p("mlp.c_proj.weight"), p("mlp.c_proj.bias"))
    x = F.layer_norm(x, (CHANNELS,), params["ln_f.weight"], params["ln_f.bias"], 1e-5)
    return x @ params.get("lm_head.weight", params["wte.weight"]).t()


def make_fixture(positional, path):
    generator = torch.Generator().manual_seed(SEED[positional])
    params = random_parameters(positional, generator)
    ids = torch.randint(0, VOCAB, (BATCH, TIME + 1), generator=generator)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()

    logits = forward(params, inputs, positional)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))
    loss.backward()
    grads = {name: value.grad.detach().clone() for name, value in params.items()}

    # nanoGPT's optimiser groups: decay the 2-D weights (matmuls, embeddings), not biases or LayerNorms.
    ordered = list(params.values())
    grad_norm = torch.nn.utils.clip_grad_norm_(ordered, GRAD_CLIP)
    assert grad_norm > GRAD_CLIP, f"{positional}: gradient norm {grad_norm} is not clipped at {GRAD_CLIP}"
    optimizer = torch.optim.AdamW(
        [
            {"params": [p for p in ordered if p.dim() >= 2], "weight_decay": WEIGHT_DECAY},
            {"params": [p for p in ordered if p.dim() < 2], "weight_decay": 0.0},
        ],
        lr=LR, betas=(BETA1, BETA2), eps=EPS,
    )
    optimizer.step()

    tensors = [("inputs", inputs.numpy()), ("targets", targets.numpy())]
    tensors += [("logits", logits.detach().numpy()), ("loss", loss.detach().numpy())]
    for name, value in params.items():
        tensors.append(("grad." + name, grads[name].numpy()))
    for name, value in params.items():
        tensors.append(("updated." + name, value.detach().numpy()))
    # The initial parameters, regenerated (the tensors above were updated in place).
    generator = torch.Generator().manual_seed(SEED[positional])
    for name, value in random_parameters(positional, generator).items():
        tensors.append(("param." + name, value.detach().numpy()))

    config = {"vocab_size": VOCAB, "block_size": BLOCK, "n_layer": LAYERS, "n_head": HEADS, "n_embd": CHANNELS,
              "positional": positional, "rope_base": ROPE_BASE}
    metadata = {"config": json.dumps(config), "lr": repr(LR), "beta1": repr(BETA1), "beta2": repr(BETA2),
                "eps": repr(EPS), "weight_decay": repr(WEIGHT_DECAY), "grad_clip": repr(GRAD_CLIP),
                "grad_norm": repr(float(grad_norm)), "torch": torch.__version__,
                "producer": "tests/reference/make_gpt_fixtures.py"}
    safetensors_io.write(path, tensors, metadata)
    print(f"{path}: loss {loss.item():.6f}, gradient norm {float(grad_norm):.4f}")


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    torch.set_num_threads(1)
    os.makedirs(sys.argv[1], exist_ok=True)
    for positional in ("learned", "sinusoidal", "rope"):
        make_fixture(positional, os.path.join(sys.argv[1], f"{positional}.safetensors"))


if __name__ == "__main__":
    main()
