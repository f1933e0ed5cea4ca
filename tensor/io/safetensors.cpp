#include "tinygpt/tensor/io/safetensors.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <memory>
#include <tuple>
#include <nlohmann/json.hpp>

#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/view.h"

namespace tg {

// The data is copied byte for byte between memory and file, which is only right
// on a little-endian machine (every machine we build for).
static_assert(std::endian::native == std::endian::little, "safetensors stores little-endian data");

namespace {

using Json = nlohmann::json;

constexpr const char* kMetadataKey = "__metadata__";
constexpr size_t kLengthFieldBytes = 8;

const char* format_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::Float32: return "F32";
    case DType::Float64: return "F64";
    case DType::Int64: return "I64";
    case DType::Bool: return "BOOL";
    case DType::BFloat16: return "BF16";
    case DType::Int8: return "I8";
    case DType::Float16: return "F16";
  }
  return "?";
}

bool parse_dtype(const std::string& name, DType& dtype) {
  for (DType candidate : {DType::Float32, DType::Float64, DType::Int64, DType::Bool, DType::BFloat16, DType::Int8,
                          DType::Float16}) {
    if (name == format_dtype_name(candidate)) {
      dtype = candidate;
      return true;
    }
  }
  return false;
}

// ---------------------------------------------------------------- writing

// The JSON header, padded with spaces so the data starts 8-byte aligned in the file.
std::string make_header(const std::string& path, const std::vector<NamedTensor>& tensors, const Metadata& metadata) {
  Json header = Json::object();
  int64_t offset = 0;
  for (const NamedTensor& named : tensors) {
    check(named.tensor.defined(), "save_safetensors: ", path, ": tensor '", named.name, "' is undefined");
    check(named.name != kMetadataKey, "save_safetensors: ", path, ": '", kMetadataKey, "' is reserved for metadata");
    check(!header.contains(named.name), "save_safetensors: ", path, ": two tensors are named '", named.name, "'");
    // An expanded view can have more elements than int64 bytes hold.
    const int64_t element_bytes = static_cast<int64_t>(dtype_size(named.tensor.dtype()));
    check(named.tensor.numel() <= (std::numeric_limits<int64_t>::max() - offset) / element_bytes, "save_safetensors: ",
          path, ": tensor '", named.name, "' of shape ", named.tensor.shape(), " takes the data past INT64_MAX bytes");
    const int64_t end = offset + named.tensor.numel() * element_bytes;
    header[named.name] = {{"dtype", format_dtype_name(named.tensor.dtype())},
                          {"shape", named.tensor.shape()},
                          {"data_offsets", {offset, end}}};
    offset = end;
  }
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// ---------------------------------------------------------------- reading

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin, end;  // byte offsets into the data region
};

struct CloseFile {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

// The file being read and the function reading it, named in every error:
// "load_safetensors: <path>: <what>" (or map_safetensors).
struct Source {
  const char* reader;
  const std::string& path;
};

template <class... Parts>
[[noreturn]] void fail_load(const Source& source, Parts&&... parts) {
  fail(source.reader, ": ", source.path, ": ", std::forward<Parts>(parts)...);
}

// A non-negative JSON integer (a size or an offset).
uint64_t read_count(const Source& source, const std::string& where, const Json& value) {
  if (value.is_number_unsigned()) {
    const uint64_t count = value.get<uint64_t>();
    if (count > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) fail_load(source, where, " is too large");
    return count;
  }
  if (value.is_number_integer()) fail_load(source, where, " is negative (", value.dump(), ")");
  fail_load(source, where, " must be an integer, got ", value.dump());
}

Entry parse_entry(const Source& source, const std::string& name, const Json& value) {
  const std::string what = "tensor '" + name + "'";
  if (!value.is_object()) fail_load(source, what, ": entry must be an object, got ", value.dump());
  for (const char* field : {"dtype", "shape", "data_offsets"})
    if (!value.contains(field)) fail_load(source, what, ": missing \"", field, "\"");

  Entry entry{name, DType::Float32, {}, 0, 0};
  const Json& dtype = value["dtype"];
  if (!dtype.is_string()) fail_load(source, what, ": \"dtype\" must be a string, got ", dtype.dump());
  if (!parse_dtype(dtype.get<std::string>(), entry.dtype))
    fail_load(source, what, ": unsupported dtype ", dtype.dump(), " (supported: F32, F64, F16, BF16, I64, I8, BOOL)");

  const Json& shape = value["shape"];
  if (!shape.is_array()) fail_load(source, what, ": \"shape\" must be an array, got ", shape.dump());
  for (const Json& size : shape)
    entry.shape.push_back(static_cast<int64_t>(read_count(source, what + ": a size in \"shape\"", size)));
  // The rules of Tensor::empty: numel's (tensor/shape.h), which a 0 among the
  // sizes does not lift, and bytes within int64.
  uint64_t bytes = 0;
  try {
    const int64_t count = numel(entry.shape);
    bytes = static_cast<uint64_t>(checked_mul(count, static_cast<int64_t>(dtype_size(entry.dtype)), "bytes"));
  } catch (const Error&) {
    fail_load(source, what, ": shape ", shape.dump(), " is too large");
  }

  const Json& offsets = value["data_offsets"];
  if (!offsets.is_array() || offsets.size() != 2)
    fail_load(source, what, ": \"data_offsets\" must be [begin, end], got ", offsets.dump());
  entry.begin = read_count(source, what + ": \"data_offsets\"", offsets[0]);
  entry.end = read_count(source, what + ": \"data_offsets\"", offsets[1]);
  if (entry.end < entry.begin) fail_load(source, what, ": data_offsets ", offsets.dump(), " end before they begin");
  if (entry.end - entry.begin != bytes)
    fail_load(source, what, ": data_offsets ", offsets.dump(), " span ", entry.end - entry.begin, " bytes but shape ",
              entry.shape, " of ", dtype.get<std::string>(), " needs ", bytes);
  return entry;
}

Metadata parse_metadata(const Source& source, const Json& value) {
  if (!value.is_object()) fail_load(source, "\"", kMetadataKey, "\" must be an object, got ", value.dump());
  Metadata metadata;
  for (const auto& [key, text] : value.items()) {
    if (!text.is_string()) fail_load(source, "metadata \"", key, "\" must be a string, got ", text.dump());
    metadata[key] = text.get<std::string>();
  }
  return metadata;
}

// The tensors must tile the data region exactly: sorted by offset, each begins
// where the previous one ended and the last ends at the end of the file.
void check_layout(const Source& source, const std::vector<Entry>& sorted, uint64_t data_bytes) {
  uint64_t covered = 0;
  const Entry* previous = nullptr;
  for (const Entry& entry : sorted) {
    if (entry.end > data_bytes)
      fail_load(source, "tensor '", entry.name, "' ends at byte ", entry.end, " of the data but the file holds only ",
                data_bytes, " bytes of data (truncated?)");
    if (entry.begin < covered)
      fail_load(source, "tensors '", previous->name, "' [", previous->begin, ", ", previous->end, ") and '", entry.name,
                "' [", entry.begin, ", ", entry.end, ") overlap");
    if (entry.begin > covered)
      fail_load(source, "a hole of ", entry.begin - covered, " bytes in the data before tensor '", entry.name, "'");
    covered = entry.end;
    previous = &entry;
  }
  if (covered != data_bytes)
    fail_load(source, data_bytes - covered, " trailing bytes after the last tensor (the data region holds ", data_bytes,
              " bytes, the tensors cover ", covered, ")");
}

// A bool must be stored as 0 or 1: any other byte read as a C++ bool is undefined behaviour.
void check_bools(const Source& source, const Entry& entry, const unsigned char* bytes) {
  for (uint64_t i = 0; i < entry.end - entry.begin; ++i)
    if (bytes[i] > 1)
      fail_load(source, "BOOL tensor '", entry.name, "' holds the byte ", static_cast<int>(bytes[i]), " at element ", i,
                " (only 0 and 1 are booleans)");
}

// The file's size, at least the 8 bytes of the length field.
uint64_t checked_file_size(const Source& source, int fd) {
  struct stat status {};
  if (::fstat(fd, &status) != 0) fail_load(source, "cannot stat: ", std::strerror(errno));
  const uint64_t file_bytes = static_cast<uint64_t>(status.st_size);
  if (file_bytes < kLengthFieldBytes)
    fail_load(source, "the file is ", file_bytes, " bytes long, too short for the 8-byte header length");
  return file_bytes;
}

// The header's length in bytes, read from the length field and checked to fit in the file.
uint64_t header_length(const Source& source, uint64_t file_bytes, const unsigned char* length_field) {
  uint64_t header_bytes = 0;
  for (size_t i = 0; i < kLengthFieldBytes; ++i) header_bytes |= uint64_t{length_field[i]} << (8 * i);
  if (header_bytes > file_bytes - kLengthFieldBytes)
    fail_load(source, "not a safetensors file: its header length ", header_bytes, " is larger than the ",
              file_bytes - kLengthFieldBytes, " bytes that follow it (a truncated file, or another kind of file)");
  return header_bytes;
}

struct Layout {
  Metadata metadata;
  std::vector<Entry> entries;  // sorted by their offset in the data
};

// Parses the header and checks that its tensors tile the `data_bytes` bytes after it.
Layout parse_header(const Source& source, const char* header_begin, uint64_t header_bytes, uint64_t data_bytes) {
  Json header;
  try {
    header = parse_bounded_json(std::string_view(header_begin, header_bytes),
                                std::string(source.reader) + ": " + source.path + ": the header");
  } catch (const Json::exception& error) {  // a syntax error, or a number beyond a double (1e999)
    fail_load(source, "the header is not valid JSON: ", json_error_text(error));
  }
  if (!header.is_object()) fail_load(source, "the header must be a JSON object, got ", header.type_name());

  Layout layout;
  for (const auto& [name, value] : header.items()) {
    if (name == kMetadataKey)
      layout.metadata = parse_metadata(source, value);
    else
      layout.entries.push_back(parse_entry(source, name, value));
  }
  std::stable_sort(layout.entries.begin(), layout.entries.end(),
                   [](const Entry& a, const Entry& b) { return std::tie(a.begin, a.end) < std::tie(b.begin, b.end); });
  check_layout(source, layout.entries, data_bytes);
  return layout;
}

// The tensors of `layout` as views into `storage`, whose data region starts at
// byte `data_start`; a tensor not aligned for its element type there is copied
// out instead (reading it in place would be undefined behaviour).
SafetensorsFile make_file(const Source& source, Layout layout, const std::shared_ptr<Storage>& storage,
                          uint64_t data_start) {
  SafetensorsFile result;
  result.path = source.path;
  result.metadata = std::move(layout.metadata);
  const auto* data = static_cast<const unsigned char*>(storage->data()) + data_start;
  for (const Entry& entry : layout.entries) {
    if (entry.dtype == DType::Bool) check_bools(source, entry, data + entry.begin);
    const uint64_t element_bytes = dtype_size(entry.dtype);
    Tensor tensor;
    if ((data_start + entry.begin) % element_bytes == 0) {
      tensor = Tensor::view_of(storage, entry.dtype, entry.shape, contiguous_strides(entry.shape),
                               static_cast<int64_t>((data_start + entry.begin) / element_bytes));
    } else {
      tensor = Tensor::empty(entry.shape, entry.dtype);
      std::memcpy(tensor.storage()->data(), data + entry.begin, entry.end - entry.begin);
    }
    tensor.set_name(entry.name);
    result.tensors.push_back({entry.name, std::move(tensor)});
  }
  return result;
}

}  // namespace

void save_safetensors(const std::string& path, const std::vector<NamedTensor>& tensors, const Metadata& metadata) {
  const std::string header = make_header(path, tensors, metadata);
  unsigned char length[kLengthFieldBytes];
  for (size_t i = 0; i < kLengthFieldBytes; ++i) length[i] = static_cast<unsigned char>(header.size() >> (8 * i));

  AtomicFile file(path, "save_safetensors");
  file.write(length, sizeof(length));
  file.write(header.data(), header.size());
  for (const NamedTensor& named : tensors) {
    const Tensor data = raw::contiguous(named.tensor);
    const auto* first = static_cast<const char*>(data.storage()->data()) + data.offset() * dtype_size(data.dtype());
    file.write(first, static_cast<size_t>(data.numel()) * dtype_size(data.dtype()));
  }
  file.commit();
}

SafetensorsFile load_safetensors(const std::string& path) {
  const Source source{"load_safetensors", path};
  std::unique_ptr<std::FILE, CloseFile> file(std::fopen(path.c_str(), "rb"));
  if (!file) fail_load(source, "cannot open: ", std::strerror(errno));
  const uint64_t file_bytes = checked_file_size(source, ::fileno(file.get()));
  auto read_exactly = [&](void* into, uint64_t count, const char* what) {
    if (count > 0 && std::fread(into, 1, count, file.get()) != count) fail_load(source, "cannot read the ", what);
  };

  unsigned char length_field[kLengthFieldBytes];
  read_exactly(length_field, kLengthFieldBytes, "header length");
  const uint64_t header_bytes = header_length(source, file_bytes, length_field);
  std::string header(header_bytes, '\0');
  read_exactly(header.data(), header_bytes, "header");
  const uint64_t data_bytes = file_bytes - kLengthFieldBytes - header_bytes;
  Layout layout = parse_header(source, header.data(), header_bytes, data_bytes);

  // One aligned buffer for all the data; tensors are views into it.
  std::shared_ptr<Storage> data = Storage::allocate(data_bytes);
  read_exactly(data->data(), data_bytes, "tensor data");
  return make_file(source, std::move(layout), data, 0);
}

SafetensorsFile map_safetensors(const std::string& path) {
  const Source source{"map_safetensors", path};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) fail_load(source, "cannot open: ", std::strerror(errno));
  uint64_t file_bytes = 0;
  void* base = MAP_FAILED;
  try {
    file_bytes = checked_file_size(source, fd);
    // Private and writable: a write lands in a private copy of its page (never
    // in the file) instead of crashing. The mapping outlives the descriptor.
    base = ::mmap(nullptr, file_bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    if (base == MAP_FAILED) fail_load(source, "cannot map ", file_bytes, " bytes: ", std::strerror(errno));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  std::shared_ptr<Storage> mapping =
      Storage::adopt(base, file_bytes, [base, file_bytes] { ::munmap(base, file_bytes); });

  const auto* bytes = static_cast<const unsigned char*>(base);
  const uint64_t header_bytes = header_length(source, file_bytes, bytes);
  const uint64_t data_start = kLengthFieldBytes + header_bytes;
  Layout layout = parse_header(source, reinterpret_cast<const char*>(bytes) + kLengthFieldBytes, header_bytes,
                               file_bytes - data_start);
  SafetensorsFile result = make_file(source, std::move(layout), mapping, data_start);
  result.mapping = std::move(mapping);
  return result;
}

void SafetensorsFile::evict(const Tensor& tensor) const {
  if (!mapping || !tensor.defined() || tensor.storage() != mapping) return;
  // Only whole pages inside the tensor: its neighbours' pages stay.
  const uintptr_t page = static_cast<uintptr_t>(::sysconf(_SC_PAGESIZE));
  const uintptr_t begin = reinterpret_cast<uintptr_t>(tensor.storage()->data()) +
                          static_cast<uintptr_t>(tensor.offset()) * dtype_size(tensor.dtype());
  const uintptr_t end = begin + static_cast<uintptr_t>(tensor.numel()) * dtype_size(tensor.dtype());
  const uintptr_t first_page = (begin + page - 1) / page * page, last_page = end / page * page;
  if (first_page < last_page) ::madvise(reinterpret_cast<void*>(first_page), last_page - first_page, MADV_DONTNEED);
}

const Tensor* SafetensorsFile::find(const std::string& name) const {
  for (const NamedTensor& named : tensors)
    if (named.name == name) return &named.tensor;
  return nullptr;
}

Tensor SafetensorsFile::at(const std::string& name) const {
  const Tensor* tensor = find(name);
  if (tensor == nullptr) fail("safetensors: no tensor named '", name, "' in ", path);
  return *tensor;
}

}  // namespace tg
