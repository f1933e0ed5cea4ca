"""Writes the PyTorch fixtures of the course's smaller models (docs/course/)
that tests/models/test_course_models.cpp checks:

    bigram.safetensors          0 layers, RoPE (nothing added), an untied lm_head:
                                logits = ln_f(wte[ids]) lm_head^T
    attention_only.safetensors  2 blocks of x = x + attn(ln_1(x)), no ln_2, no MLP,
                                learned positions, the head tied to wte

The model is make_gpt_fixtures.py's from-scratch PyTorch GPT (same conventions),
with its blocks or their MLP left out. For a batch of 2 x 16 random ids each
records param.<name>, inputs, targets, logits, loss and grad.<name>, and
tinygpt's config JSON as metadata "config". Run with Debian's python3, from the
project root:

    /usr/bin/python3 tests/reference/make_course_fixtures.py tests/fixtures/course
"""
import json
import os
import sys

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import make_gpt_fixtures as gpt  # noqa: E402
import safetensors_io  # noqa: E402

MODELS = {
    "bigram": dict(seed=3001, layers=0, positional="rope", tie_embeddings=False),
    "attention_only": dict(seed=3002, layers=2, positional="learned", tie_embeddings=True),
}


def parameters(model, generator):
    """gpt's random parameters of a 2-layer model, keeping only what this model has."""
    params = gpt.random_parameters(model["positional"], generator)
    kept = {}
    for name, value in params.items():
        block = name.split(".")[1] if name.startswith("blocks.") else None
        if block is not None and (int(block) >= model["layers"] or ".ln_2." in name or ".mlp." in name):
            continue
        kept[name] = value
    if not model["tie_embeddings"]:
        kept["lm_head.weight"] = (0.02 * torch.randn(gpt.VOCAB, gpt.CHANNELS, generator=generator)).requires_grad_(True)
    return kept


def make_fixture(name, model, path):
    generator = torch.Generator().manual_seed(model["seed"])
    params = parameters(model, generator)
    ids = torch.randint(0, gpt.VOCAB, (gpt.BATCH, gpt.TIME + 1), generator=generator)
    inputs, targets = ids[:, :-1].contiguous(), ids[:, 1:].contiguous()
    logits = gpt.forward(params, inputs, model["positional"], layers=model["layers"], mlp=False)
    loss = F.cross_entropy(logits.reshape(-1, gpt.VOCAB), targets.reshape(-1))
    loss.backward()

    tensors = [("inputs", inputs.numpy()), ("targets", targets.numpy())]
    tensors += [("logits", logits.detach().numpy()), ("loss", loss.detach().numpy())]
    for parameter_name, value in params.items():
        tensors.append(("param." + parameter_name, value.detach().numpy()))
        tensors.append(("grad." + parameter_name, value.grad.numpy()))
    config = {"vocab_size": gpt.VOCAB, "block_size": gpt.BLOCK, "n_layer": model["layers"], "n_head": gpt.HEADS,
              "n_embd": gpt.CHANNELS, "positional": model["positional"], "rope_base": gpt.ROPE_BASE, "mlp": "none",
              "tie_embeddings": model["tie_embeddings"]}
    metadata = {"config": json.dumps(config), "torch": torch.__version__,
                "producer": "tests/reference/make_course_fixtures.py"}
    safetensors_io.write(path, tensors, metadata)
    print(f"{path}: loss {loss.item():.6f}")


def main():
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT_DIR")
    torch.set_num_threads(1)
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, model in MODELS.items():
        make_fixture(name, model, os.path.join(sys.argv[1], f"{name}.safetensors"))


if __name__ == "__main__":
    main()
