// Reading and writing tensors in the safetensors format (the checkpoint format
// of Hugging Face, readable from Python without pickle):
//
//   bytes 0..8        N, the header length, a little-endian uint64
//   bytes 8..8+N      a JSON object, padded with spaces to a multiple of 8 bytes:
//                       {"wte": {"dtype": "F32", "shape": [V, C], "data_offsets": [begin, end]},
//                        ...,
//                        "__metadata__": {"step": "1000", ...}}   (string values only)
//   bytes 8+N..       the data: each tensor row-major, little-endian, at
//                     [begin, end) counted from the first byte after the header
//
// Supported dtypes: F32, F64, I64, BOOL (float32, float64, int64, bool).
//
// What load_safetensors accepts: the data region must be covered exactly by the
// tensors, back to back, in any header order: no overlap, no hole, and no
// trailing bytes after the last tensor (as the reference Rust implementation
// demands). So a truncated or padded file is rejected rather than half-read.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace tg {

using Metadata = std::map<std::string, std::string>;

struct NamedTensor {
  std::string name;
  Tensor tensor;
};

// Writes `tensors` (any layout: non-contiguous ones are written row-major) and
// `metadata` to `path`, atomically: the bytes go to a temporary file in the same
// directory, which is flushed to disk (fsync) and then renamed over `path`. A
// crash mid-save leaves the previous file intact. The header's JSON object lists
// names in sorted order; the data is laid out in the order given (so a tensor
// that follows a BOOL tensor of odd size is not aligned, and loads as a copy).
void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors,
                      const Metadata& metadata = {});

struct SafetensorsFile {
  std::string path;                  // where it was read from (named in errors)
  Metadata metadata;
  std::vector<NamedTensor> tensors;  // in the order of their data in the file

  // The tensor called `name`, or nullptr.
  const Tensor* find(const std::string& name) const;
  // The tensor called `name`; throws naming it and the path when it is missing.
  Tensor at(const std::string& name) const;
};

// Reads and validates a whole file. Every tensor is a view into one 64-byte
// aligned Storage holding the data region (no per-tensor copy), except a tensor
// whose offset is not a multiple of its element size, which is copied out.
// Throws tg::Error naming the path and what is wrong with the file.
SafetensorsFile load_safetensors(const std::string& path);

}  // namespace tg
