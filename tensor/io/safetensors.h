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
// Supported dtypes: F32, F64, F16, BF16, I64, I8, BOOL (float16 is read and written as
// stored; tinygpt converts it to float32 or bfloat16 on the way into a model).
//
// What load_safetensors and map_safetensors accept: the data region must be covered exactly by the
// tensors, back to back, in any header order: no overlap, no hole, and no
// trailing bytes after the last tensor (as the reference Rust implementation
// demands). So a truncated or padded file is rejected rather than half-read.
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/tensor/tensor.h"

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
  std::shared_ptr<Storage> mapping;  // map_safetensors only: the whole file, mapped

  // The tensor called `name`, or nullptr.
  const Tensor* find(const std::string& name) const;
  // The tensor called `name`; throws naming it and the path when it is missing.
  Tensor at(const std::string& name) const;
  // For a mapped file, after the last read of `tensor` (one of its views): drops
  // the tensor's pages from the process's resident memory. The page cache keeps
  // them, so reading it again costs page faults, not disk reads; a write made to
  // those pages is lost. Does nothing for load_safetensors' files and copies.
  void evict(const Tensor& tensor) const;
};

// Reads and validates a whole file. Every tensor is a view into one 64-byte
// aligned Storage holding the data region (no per-tensor copy), except a tensor
// whose offset is not a multiple of its element size, which is copied out.
// Throws tg::Error naming the path and what is wrong with the file.
SafetensorsFile load_safetensors(const std::string& path);

// As load_safetensors, with the same checks and errors ("map_safetensors: ..."),
// but nothing is read up front: the file is memory-mapped and the tensors are
// views into the mapping (one Storage that unmaps the file when the last tensor
// viewing it is gone), so the operating system pages the data in as it is read
// and a file in the page cache costs no copy. A tensor whose offset in the file
// is not a multiple of its element size is copied out, as load_safetensors does.
//
// Mapped tensors are read-only in spirit: a write goes to a private copy of the
// page it touches (never to the file), costing memory. Replacing the file by
// rename (as save_safetensors does) is safe while it is mapped; truncating it
// in place is not (reading a page past the new end kills the process: SIGBUS).
SafetensorsFile map_safetensors(const std::string& path);

}  // namespace tg
