"""Writes tests/fixtures/muon/llama3.safetensors, which tests/training/test_muon.cpp
checks: two steps of Muon (for the blocks' matrices) with AdamW (for the rest) on
the 2-layer Llama-style model of make_modern_gpt_fixtures.py ("llama3": grouped-
query attention, so the fused qkv rows are blocks of 32, 16 and 16; SwiGLU, so
c_fc's rows are gate and up, and it has more rows than columns).

Muon is written here from its published formulas (KellerJordan/Muon's
muon_update and zeropower_via_newtonschulz5), in float32 rather than the
reference's bfloat16, and applied to each stacked block of rows on its own:

    buf = buf.lerp(g, 1 - momentum);  u = g.lerp(buf, momentum)       (Nesterov)
    X = u (or u^T when u has more rows than columns) / (|u|_F + 1e-7)
    5 times: A = X X^T;  B = b A + c A A;  X = a X + B X   (a, b, c = 3.4445, -4.7750, 2.0315)
    p = p (1 - lr wd) - lr sqrt(max(1, rows / cols)) X

AdamW is torch.optim.AdamW, decaying the 2-D weights (wte, lm_head), not the norms.
Records:

    param.<name>                 the initial parameters
    grad0.<name>, grad1.<name>   d loss / d parameter before step 1 and before step 2
    step1.<name>, step2.<name>   the parameters after each step

and the hyperparameters as metadata. Run with Debian's python3, from the project root:

    /usr/bin/python3 tests/reference/make_muon_fixture.py tests/fixtures/muon
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_modern_gpt_fixtures as modern  # noqa: E402
import safetensors_io  # noqa: E402

KIND = "llama3"
HYPER = {"muon_lr": 0.05, "muon_momentum": 0.95, "muon_weight_decay": 0.1, "muon_ns_steps": 5,
         "lr": 0.01, "beta1": 0.9, "beta2": 0.95, "eps": 1e-8, "weight_decay": 0.1}


def row_blocks(name, c):
    """The stacked products of a hidden matrix, as tinygpt orthogonalises them."""
    hd = c["head_dim"]
    if name.endswith("attn.qkv.weight"):
        return [c["n_head"] * hd, c["n_kv_head"] * hd, c["n_kv_head"] * hd]
    if name.endswith("mlp.c_fc.weight") and c["mlp"] == "swiglu":
        return [modern.mlp_hidden(c)] * 2
    return None


def is_hidden(name):
    return name.startswith("blocks.") and name.endswith(("qkv.weight", "c_proj.weight", "c_fc.weight"))


def zeropower(g, steps):
    a, b, c = 3.4445, -4.7750, 2.0315
    x = g.float()
    transposed = g.size(0) > g.size(1)
    if transposed:
        x = x.T
    x = x / (x.norm() + 1e-7)
    for _ in range(steps):
        A = x @ x.T
        B = b * A + c * A @ A
        x = a * x + B @ x
    return x.T if transposed else x


class Muon:
    def __init__(self, params, blocks):
        self.params, self.blocks = params, blocks
        self.buffers = {name: torch.zeros_like(p) for name, p in params.items()}

    @torch.no_grad()
    def step(self):
        lr, beta, wd = HYPER["muon_lr"], HYPER["muon_momentum"], HYPER["muon_weight_decay"]
        for name, p in self.params.items():
            sizes = self.blocks[name] or [p.size(0)]
            for p_rows, g_rows, buf_rows in zip(p.split(sizes), p.grad.split(sizes), self.buffers[name].split(sizes)):
                buf_rows.lerp_(g_rows, 1 - beta)
                update = g_rows.lerp(buf_rows, beta)
                update = zeropower(update, HYPER["muon_ns_steps"])
                update = update * max(1, p_rows.size(0) / p_rows.size(1)) ** 0.5
                p_rows.mul_(1 - lr * wd)
                p_rows.add_(update, alpha=-lr)


def loss_of(params, inputs, targets, c):
    logits = modern.forward(params, inputs, c)
    return F.cross_entropy(logits.reshape(-1, modern.VOCAB), targets.reshape(-1))


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    torch.set_num_threads(1)
    os.makedirs(sys.argv[1], exist_ok=True)
    c = modern.COMBINATIONS[KIND]
    generator = torch.Generator().manual_seed(c["seed"] + 100)
    params = modern.random_parameters(c, generator)
    ids = torch.randint(0, modern.VOCAB, (modern.BATCH, modern.TIME + 1), generator=generator)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()

    hidden = {name: p for name, p in params.items() if is_hidden(name)}
    rest = [p for name, p in params.items() if not is_hidden(name)]
    decayed = [p for name, p in params.items() if not is_hidden(name) and p.dim() >= 2]
    undecayed = [p for name, p in params.items() if not is_hidden(name) and p.dim() < 2]
    assert len(decayed) + len(undecayed) == len(rest)
    muon = Muon(hidden, {name: row_blocks(name, c) for name in hidden})
    adamw = torch.optim.AdamW([{"params": decayed, "weight_decay": HYPER["weight_decay"]},
                               {"params": undecayed, "weight_decay": 0.0}],
                              lr=HYPER["lr"], betas=(HYPER["beta1"], HYPER["beta2"]), eps=HYPER["eps"],
                              foreach=False)

    tensors = [("inputs", inputs.numpy()), ("targets", targets.numpy())]
    tensors += [("param." + name, p.detach().clone().numpy()) for name, p in params.items()]
    for step in range(2):
        for p in params.values():
            p.grad = None
        loss_of(params, inputs, targets, c).backward()
        tensors += [(f"grad{step}." + name, p.grad.clone().numpy()) for name, p in params.items()]
        adamw.step()
        muon.step()
        tensors += [(f"step{step + 1}." + name, p.detach().clone().numpy()) for name, p in params.items()]

    metadata = {"config": json.dumps(modern.tinygpt_config(c)), "hyperparameters": json.dumps(HYPER),
                "torch": torch.__version__, "producer": "tests/reference/make_muon_fixture.py"}
    path = os.path.join(sys.argv[1], f"{KIND}.safetensors")
    safetensors_io.write(path, tensors, metadata)
    print(f"{path}: {len(hidden)} Muon matrices, {len(rest)} AdamW parameters")


if __name__ == "__main__":
    main()
