"""A minimal safetensors reader and writer in plain Python 3 + NumPy.

The `safetensors` pip package is not available here, and the format is small
enough to write by hand (see tensor/io/safetensors.h for the layout):

    8 bytes   N, the JSON header length, little-endian uint64
    N bytes   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}, ...,
               "__metadata__": {"key": "value"}}, padded with spaces to a multiple of 8
    the data  each tensor row-major and little-endian, back to back, in the order given

NumPy arrays of F32, F64, F16, I64 and BOOL; any other dtype (BF16) as a
(dtype name, shape, bytes) tuple. The reader returns BF16 widened to F32 (exact:
a bfloat16 is the top half of a float32), since NumPy has no bfloat16.

As a script it writes the sample file the C++ tests load to check that they read
what another implementation wrote:

    python3 tests/reference/safetensors_io.py tests/fixtures/python_written.safetensors
"""
import json
import struct
import sys

import numpy as np

DTYPE_BY_NAME = {"F32": np.dtype("<f4"), "F64": np.dtype("<f8"), "F16": np.dtype("<f2"), "I64": np.dtype("<i8"),
                 "BOOL": np.dtype("bool")}
NAME_BY_KIND = {("f", 4): "F32", ("f", 8): "F64", ("f", 2): "F16", ("i", 8): "I64", ("b", 1): "BOOL"}


def write(path, tensors, metadata=None):
    """Writes `tensors`, a list of (name, array) pairs (or a dict), in that order."""
    items = list(tensors.items()) if isinstance(tensors, dict) else list(tensors)
    header, blobs, offset = {}, [], 0
    for name, array in items:
        if isinstance(array, tuple):  # (dtype name, shape, bytes): a dtype NumPy lacks, such as BF16
            dtype_name, shape, blob = array
        else:
            array = np.asarray(array)
            dtype_name = NAME_BY_KIND.get((array.dtype.kind, array.dtype.itemsize))
            if dtype_name is None:
                raise ValueError(f"{name}: unsupported dtype {array.dtype}")
            blob = np.ascontiguousarray(array, dtype=DTYPE_BY_NAME[dtype_name]).tobytes()
            shape = array.shape
        header[name] = {"dtype": dtype_name, "shape": list(shape), "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    if metadata:
        header["__metadata__"] = {str(key): str(value) for key, value in metadata.items()}
    # Sorted keys and fixed separators: the same tensors give the same bytes.
    text = json.dumps(header, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)))
        file.write(text)
        for blob in blobs:
            file.write(blob)


def read(path):
    """Returns ({name: array}, metadata) with the tensors in file (offset) order."""
    with open(path, "rb") as file:
        content = file.read()
    (header_length,) = struct.unpack("<Q", content[:8])
    header = json.loads(content[8 : 8 + header_length].decode("utf-8"))
    metadata = header.pop("__metadata__", {})
    data = content[8 + header_length :]
    tensors = {}
    for name, entry in sorted(header.items(), key=lambda item: item[1]["data_offsets"]):
        begin, end = entry["data_offsets"]
        if entry["dtype"] == "BF16":
            halves = np.frombuffer(data[begin:end], dtype="<u2").astype("<u4") << 16
            tensors[name] = halves.view("<f4").reshape(entry["shape"]).copy()
            continue
        dtype = DTYPE_BY_NAME[entry["dtype"]]
        tensors[name] = np.frombuffer(data[begin:end], dtype=dtype).reshape(entry["shape"]).copy()
    return tensors, metadata


def write_sample(path):
    """Every dtype, a 0-d and an empty tensor, and offsets that are not aligned
    (the 3-byte BOOL tensor comes first, so the ones after it must be copied)."""
    write(
        path,
        [
            ("flags", np.array([True, False, True])),
            ("matrix", np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1),
            ("ids", np.array([-1, 0, 7, 2**40], dtype=np.int64)),
            ("scalar", np.array(3.25, dtype=np.float64)),
            ("nothing", np.zeros((0, 2), dtype=np.float32)),
        ],
        metadata={"producer": "safetensors_io.py", "note": "caf\u00e9 \u2713"},
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(f"usage: {sys.argv[0]} OUTPUT.safetensors")
    write_sample(sys.argv[1])
    tensors, metadata = read(sys.argv[1])
    for name, array in tensors.items():
        print(name, array.dtype, array.shape, array.tolist())
    print(metadata)
