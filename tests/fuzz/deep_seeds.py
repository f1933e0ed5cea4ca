#!/usr/bin/env python3
"""Writes JSON nested 70,000 levels deep and JSON tens of thousands of entries
wide, in the form each harness reads, into a directory:
python3 tests/fuzz/deep_seeds.py HARNESS DIR.

Printing a deep value used to overflow the stack (now refused at 64 levels,
tensor/io/bounded_json.h); a wide one took seconds to minutes to parse (the parser
callback was quadratic in a container's size), which inputs of the fuzzers'
usual 4-16 KB never showed. At 0.1-2 MB each these files are written when the
fuzzers run (scripts/fuzz.sh) rather than kept in tests/fuzz/corpus/. Harnesses
that read no JSON get none."""
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


WIDE = 20_000


def many_tensors(count):
    """A safetensors header of `count` empty float32 tensors, as a model with that many would list them."""
    entries = {f"h.{i}.weight": {"dtype": "F32", "shape": [0], "data_offsets": [0, 0]} for i in range(count)}
    return json.dumps(entries)


SEEDS = {
    "safetensors": {"header_nested_70000": safetensors('{"a": ' + DEEP + "}"),
                    "header_20000_tensors": safetensors(many_tensors(WIDE))},
    # A tinygpt checkpoint's config metadata, parsed after the format is checked.
    "checkpoint": {
        "config_nested_70000": safetensors(
            json.dumps({"__metadata__": {"format": "tinygpt-checkpoint-v1", "config": DEEP}}))
    },
    "hf_config": {"nested_70000.json": ('{"n_inner": ' + DEEP + ', "n_layer": 2}').encode(),
                  "empty_objects_200000.json": ('{"n_inner": [' + ",".join(["{}"] * 200_000) + '], "n_layer": 2}').encode()},
    "token_meta": {"nested_70000.json": ('{"format": ' + DEEP + "}").encode(),
                   "sources_20000.json": json.dumps({
                       "format": "tinygpt-tokens-v1", "tokenizer": {"type": "char", "characters": "ab"},
                       "vocab_size": 2, "dtype": "uint16",
                       "train": {"file": "train.bin", "tokens": 1, "xxh3": "0" * 16},
                       "val": {"file": "val.bin", "tokens": 1, "xxh3": "0" * 16},
                       "sources": [{"file": f"part{i}.txt", "bytes": 1} for i in range(WIDE)]}).encode()},
    # encoder.json, the NUL that ends it, and no vocab.bpe.
    "gpt2_vocabulary": {"encoder_nested_70000": ('{"a": ' + DEEP + "}\0").encode(),
                        "encoder_20000_entries": (json.dumps({f"t{i}": i for i in range(WIDE)}) + "\0").encode()},
}

if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: deep_seeds.py HARNESS DIR")
    harness, directory = sys.argv[1], pathlib.Path(sys.argv[2])
    for name, contents in SEEDS.get(harness, {}).items():
        (directory / name).write_bytes(contents)
