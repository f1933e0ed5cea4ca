#include "tinygpt/models/token_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>

#include "tinygpt/tensor/error.h"

namespace tg {

// The ids are read straight from the mapping, so the host must store integers
// as the files do.
static_assert(std::endian::native == std::endian::little, "token files are little-endian");

const char* token_dtype_name(TokenDType dtype) { return dtype == TokenDType::uint16 ? "uint16" : "uint32"; }

std::optional<TokenDType> token_dtype_from_name(std::string_view name) {
  if (name == "uint16") return TokenDType::uint16;
  if (name == "uint32") return TokenDType::uint32;
  return std::nullopt;
}

int64_t token_dtype_bytes(TokenDType dtype) { return dtype == TokenDType::uint16 ? 2 : 4; }

int64_t token_dtype_max_vocab_size(TokenDType dtype) {
  return dtype == TokenDType::uint16 ? (int64_t{1} << 16) - 1 : (int64_t{1} << 32) - 1;
}

TokenDType token_dtype_for_vocab_size(int64_t vocab_size) {
  return vocab_size <= token_dtype_max_vocab_size(TokenDType::uint16) ? TokenDType::uint16 : TokenDType::uint32;
}

namespace {

// Closes the file when the constructor is done with it, whichever way it leaves.
struct OpenFile {
  int fd;
  ~OpenFile() {
    if (fd >= 0) ::close(fd);
  }
};

template <class Stored>
void widen_ids(const Stored* ids, int64_t start, int64_t count, int64_t vocab_size, const std::string& path,
               int64_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    const int64_t id = ids[start + i];
    if (id >= vocab_size) {
      fail("token file '", path, "': id ", id, " at token position ", start + i, " is outside the vocabulary of ",
           vocab_size, " ids (0..", vocab_size - 1, "): the file is damaged or belongs to another vocabulary");
    }
    out[i] = id;
  }
}

}  // namespace

TokenFile::TokenFile(std::string path, TokenDType dtype, int64_t vocab_size)
    : path_(std::move(path)), dtype_(dtype), vocab_size_(vocab_size) {
  const OpenFile file{::open(path_.c_str(), O_RDONLY | O_CLOEXEC)};
  check(file.fd >= 0, "cannot open token file '", path_, "': ", std::strerror(errno));
  struct stat status {};
  check(::fstat(file.fd, &status) == 0, "cannot read the size of token file '", path_, "': ", std::strerror(errno));
  check(S_ISREG(status.st_mode), "token file '", path_, "' is not a regular file");
  const int64_t bytes = status.st_size;
  const int64_t width = token_dtype_bytes(dtype_);
  check(bytes % width == 0, "token file '", path_, "' has ", bytes, " bytes, not a whole number of ",
        token_dtype_name(dtype_), " ids (", width, " bytes each): it is truncated or not a ", token_dtype_name(dtype_),
        " file");
  size_ = bytes / width;
  if (bytes == 0) return;  // mmap refuses a length of 0, and there is nothing to read
  void* mapping = ::mmap(nullptr, static_cast<std::size_t>(bytes), PROT_READ, MAP_PRIVATE, file.fd, 0);
  check(mapping != MAP_FAILED, "cannot map token file '", path_, "' (", bytes, " bytes): ", std::strerror(errno));
  // Training reads windows at random positions: read-ahead would fetch pages no window needs.
  ::madvise(mapping, static_cast<std::size_t>(bytes), MADV_RANDOM);  // advice only
  mapping_ = mapping;
  mapped_bytes_ = static_cast<std::size_t>(bytes);
}

TokenFile::~TokenFile() { unmap(); }

TokenFile::TokenFile(TokenFile&& other) noexcept
    : path_(std::move(other.path_)),
      dtype_(other.dtype_),
      vocab_size_(other.vocab_size_),
      size_(other.size_),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapped_bytes_(std::exchange(other.mapped_bytes_, 0)) {}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    unmap();
    path_ = std::move(other.path_);
    dtype_ = other.dtype_;
    vocab_size_ = other.vocab_size_;
    size_ = other.size_;
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
  }
  return *this;
}

void TokenFile::unmap() {
  if (mapping_ != nullptr) ::munmap(const_cast<void*>(mapping_), mapped_bytes_);
  mapping_ = nullptr;
}

void TokenFile::copy_window(int64_t start, int64_t count, int64_t* out) const {
  check(start >= 0 && count >= 0 && start <= size_ && count <= size_ - start, "token file '", path_, "': a window of ",
        count, " tokens at position ", start, " does not lie inside its ", size_, " tokens");
  if (count == 0) return;
  if (dtype_ == TokenDType::uint16) {
    widen_ids(static_cast<const uint16_t*>(mapping_), start, count, vocab_size_, path_, out);
  } else {
    widen_ids(static_cast<const uint32_t*>(mapping_), start, count, vocab_size_, path_, out);
  }
  // The window's pages belong to the page cache, not to this process: drop them
  // from the mapping again (the kernel keeps them cached for the next read), so
  // that resident memory stays flat however long the run and large the corpus.
  // Without this a run's resident size grew by the pages its random windows
  // (and the kernel's fault-around) had touched: +300 MB in 50 steps on 1 GB.
  // A fault maps the pages around it too (the kernel's fault-around, 64 KiB by
  // default), so the whole 2 MiB-aligned stretch around the window is dropped,
  // clamped to the mapping.
  constexpr uintptr_t kStretch = uintptr_t{2} << 20;
  const int64_t width = token_dtype_bytes(dtype_);
  const auto mapping_begin = reinterpret_cast<uintptr_t>(mapping_);
  const uintptr_t first = mapping_begin + static_cast<uintptr_t>(start * width);
  const uintptr_t last = first + static_cast<uintptr_t>(count * width);
  const uintptr_t begin = std::max(mapping_begin, first / kStretch * kStretch);
  const uintptr_t end = std::min(mapping_begin + mapped_bytes_, (last + kStretch - 1) / kStretch * kStretch);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);  // advice only: a failure costs memory, not ids
}

}  // namespace tg
