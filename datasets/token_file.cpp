#include "tinygpt/datasets/token_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cstring>
#include <utility>
#include <vector>

#include "tinygpt/tensor/error.h"

namespace tg {

// The ids are copied as they are stored, so the host must store integers as the files do.
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

template <class Stored>
void widen_ids(const unsigned char* bytes, int64_t start, int64_t count, int64_t vocab_size, const std::string& path,
               int64_t* out) {
  for (int64_t i = 0; i < count; ++i) {
    Stored stored;
    std::memcpy(&stored, bytes + i * static_cast<int64_t>(sizeof(Stored)), sizeof(Stored));
    const int64_t id = stored;
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
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  check(fd_ >= 0, "cannot open token file '", path_, "': ", std::strerror(errno));
  struct stat status {};
  if (::fstat(fd_, &status) != 0 || !S_ISREG(status.st_mode)) {
    const std::string reason = S_ISREG(status.st_mode) ? std::strerror(errno) : "it is not a regular file";
    close();
    fail("token file '", path_, "': ", reason);
  }
  const int64_t bytes = status.st_size;
  const int64_t width = token_dtype_bytes(dtype_);
  if (bytes % width != 0) {
    close();
    fail("token file '", path_, "' has ", bytes, " bytes, not a whole number of ", token_dtype_name(dtype_), " ids (",
         width, " bytes each): it is truncated or not a ", token_dtype_name(dtype_), " file");
  }
  size_ = bytes / width;
  // Training reads windows at random positions: read-ahead would fetch pages no window needs.
  ::posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);  // advice only
}

TokenFile::~TokenFile() { close(); }

TokenFile::TokenFile(TokenFile&& other) noexcept
    : path_(std::move(other.path_)),
      dtype_(other.dtype_),
      vocab_size_(other.vocab_size_),
      size_(other.size_),
      fd_(std::exchange(other.fd_, -1)) {}

TokenFile& TokenFile::operator=(TokenFile&& other) noexcept {
  if (this != &other) {
    close();
    path_ = std::move(other.path_);
    dtype_ = other.dtype_;
    vocab_size_ = other.vocab_size_;
    size_ = other.size_;
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void TokenFile::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

void TokenFile::copy_window(int64_t start, int64_t count, int64_t* out) const {
  check(start >= 0 && count >= 0 && start <= size_ && count <= size_ - start, "token file '", path_, "': a window of ",
        count, " tokens at position ", start, " does not lie inside its ", size_, " tokens");
  if (count == 0) return;
  const int64_t width = token_dtype_bytes(dtype_);
  const size_t wanted = static_cast<size_t>(count * width);
  thread_local std::vector<unsigned char> window_bytes;  // a window's worth, kept between calls
  if (window_bytes.size() < wanted) window_bytes.resize(wanted);
  unsigned char* bytes = window_bytes.data();
  size_t done = 0;
  while (done < wanted) {
    const ssize_t got = ::pread(fd_, bytes + done, wanted - done, static_cast<off_t>(start * width) + static_cast<off_t>(done));
    if (got < 0 && errno == EINTR) continue;
    check(got >= 0, "token file '", path_, "': cannot read ", count, " tokens at position ", start, ": ",
          std::strerror(errno));
    check(got > 0, "token file '", path_, "' is shorter than when it was opened (", size_, " tokens): another "
          "program changed it while this one read it; give each run a dataset no other writes to");
    done += static_cast<size_t>(got);
  }
  if (dtype_ == TokenDType::uint16) {
    widen_ids<uint16_t>(bytes, start, count, vocab_size_, path_, out);
  } else {
    widen_ids<uint32_t>(bytes, start, count, vocab_size_, path_, out);
  }
}

}  // namespace tg
