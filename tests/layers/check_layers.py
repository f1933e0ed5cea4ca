#!/usr/bin/env python3
"""Checks that no #include runs upward between the project's folders.

Each folder (tensor/'s rooms counted apart) may include the folders listed for it
below and itself; docs/ARCHITECTURE.md draws the same map. Run from the project root:
    python3 tests/layers/check_layers.py
It prints every include that breaks the map and exits 1, or says how many it read.
"""
import os
import re
import sys

BASE = {"tensor/error.h", "tensor/shape.h", "tensor/bfloat16.h"}  # what every folder may include
# tokenizer/ stands beside the tensor layer: of it only the error base and files (tensor/io/).
TOKENIZER_BASE = {"tensor/error.h"}
TENSOR = ["tensor/runtime", "tensor/cpu", "tensor", "tensor/io"]
ALLOWED = {
    "tensor/runtime": [],
    "tensor/cpu": ["tensor/runtime"],
    "tensor": ["tensor/runtime", "tensor/cpu"],
    "tensor/io": ["tensor/runtime", "tensor/cpu", "tensor"],
    "tokenizer": ["tensor/io"],
    "autograd": TENSOR,
    "nn": TENSOR + ["autograd"],
    "distributed": TENSOR + ["autograd", "nn"],
    "datasets": TENSOR + ["tokenizer"],
    "models": TENSOR + ["autograd", "nn", "distributed", "datasets", "tokenizer"],
    "training": TENSOR + ["autograd", "nn", "distributed", "datasets", "tokenizer", "models"],
    "inspect": TENSOR + ["autograd", "nn", "distributed", "datasets", "tokenizer", "models", "training"],
    "serve": TENSOR + ["autograd", "nn", "distributed", "datasets", "tokenizer", "models", "training", "inspect"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"tinygpt/([^"]+)"', re.MULTILINE)


def room(path):
    parts = path.split("/")
    if parts[0] == "tensor" and len(parts) > 2:
        return "tensor/" + parts[1]
    return parts[0]


def main():
    broken, read = [], 0
    for folder in ALLOWED:
        for directory, _, names in os.walk(folder):
            for name in sorted(names):
                path = os.path.join(directory, name)
                if not name.endswith((".h", ".cpp")) or room(path) != folder:
                    continue
                read += 1
                base = TOKENIZER_BASE if folder == "tokenizer" else BASE
                with open(path, encoding="utf-8") as source:
                    for included in INCLUDE.findall(source.read()):
                        target = room(included)
                        if target == folder or target in ALLOWED[folder] or included in base:
                            continue
                        broken.append(f"{path} includes {included}: {folder}/ may not include {target}/")
    for line in broken:
        print(line)
    if broken:
        sys.exit(1)
    print(f"layers: {read} files, every include runs downward")


if __name__ == "__main__":
    main()
