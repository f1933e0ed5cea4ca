// Fuzzes the safetensors reader (tensor/io/safetensors.h) with arbitrary files.
//
// load_safetensors and map_safetensors make the same checks, so they must
// agree: both refuse the input with tg::Error, or both accept it with the same
// metadata and the same tensors (names, dtypes, shapes, bytes). Comparing the
// bytes reads every byte of every tensor, so AddressSanitizer catches a view
// that reaches past its data.
#include <cstdint>
#include <cstring>
#include <optional>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tests/fuzz/memory_file.h"
#include "tests/fuzz/property.h"

namespace {

using tg::fuzz::check_property;

// The file as `read` gives it, or nothing when it refuses it.
template <class Read>
std::optional<tg::SafetensorsFile> read_or_refuse(Read read, const std::string& path) {
  try {
    return read(path);
  } catch (const tg::Error&) {
    return std::nullopt;
  }
}

const char* first_byte(const tg::Tensor& tensor) {
  return static_cast<const char*>(tensor.storage()->data()) + tensor.offset() * tg::dtype_size(tensor.dtype());
}

bool same_tensor(const tg::Tensor& a, const tg::Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape() || !a.is_contiguous() || !b.is_contiguous()) return false;
  const size_t bytes = static_cast<size_t>(a.numel()) * tg::dtype_size(a.dtype());
  return std::memcmp(first_byte(a), first_byte(b), bytes) == 0;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const tg::fuzz::MemoryFile file(data, size);
  const auto loaded = read_or_refuse(tg::load_safetensors, file.path());
  const auto mapped = read_or_refuse(tg::map_safetensors, file.path());
  check_property(loaded.has_value() == mapped.has_value(), "load_safetensors and map_safetensors accept the same files");
  if (!loaded) return 0;
  check_property(loaded->metadata == mapped->metadata, "both readers find the same metadata");
  check_property(loaded->tensors.size() == mapped->tensors.size(), "both readers find the same number of tensors");
  for (size_t i = 0; i < loaded->tensors.size(); ++i) {
    check_property(loaded->tensors[i].name == mapped->tensors[i].name, "both readers list the tensors in one order");
    check_property(same_tensor(loaded->tensors[i].tensor, mapped->tensors[i].tensor),
                   "both readers give each tensor the same dtype, shape and bytes");
  }
  return 0;
}
