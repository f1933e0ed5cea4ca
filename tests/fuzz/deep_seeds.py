#!/usr/bin/env python3
"""Writes the issue's JSON nested 70,000 levels deep, in the form each harness
reads, into a directory: python3 tests/fuzz/deep_seeds.py HARNESS DIR.

Printing such a value used to overflow the stack (now refused at 64 levels,
tensor/bounded_json.h). At 140 KB each these files are written when the fuzzers
run (scripts/fuzz.sh) rather than kept in tests/fuzz/corpus/. Harnesses that
read no JSON get none."""
import json
import pathlib
import struct
import sys

DEPTH = 70_000
DEEP = "[" * DEPTH + "]" * DEPTH


def safetensors(header_text, data=b""):
    """A safetensors file: the header's length (little-endian uint64), the header padded to 8 bytes, the data."""
    header = header_text.encode()
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + data


SEEDS = {
    "safetensors": {"header_nested_70000": safetensors('{"a": ' + DEEP + "}")},
    # A tinygpt checkpoint's config metadata, parsed after the format is checked.
    "checkpoint": {
        "config_nested_70000": safetensors(
            json.dumps({"__metadata__": {"format": "tinygpt-checkpoint-v1", "config": DEEP}}))
    },
    "hf_config": {"nested_70000.json": ('{"n_inner": ' + DEEP + ', "n_layer": 2}').encode()},
    # encoder.json, the NUL that ends it, and no vocab.bpe.
    "gpt2_vocabulary": {"encoder_nested_70000": ('{"a": ' + DEEP + "}\0").encode()},
}

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: deep_seeds.py HARNESS DIR")
    harness, directory = sys.argv[1], pathlib.Path(sys.argv[2])
    for name, contents in SEEDS.get(harness, {}).items():
        (directory / name).write_bytes(contents)
