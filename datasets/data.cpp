#include "tinygpt/datasets/data.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <limits>

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

// A pipe holds what a program writes into it, without end if it never stops: past this much
// the text belongs in a file (or in tinygpt prepare, which streams).
constexpr size_t kMaxPipedTextBytes = size_t{1} << 30;

// Reads from `fd` into `text` until end of file or `limit` bytes; returns false past the limit.
bool read_all(int fd, const std::string& path, std::string& text, size_t limit) {
  constexpr size_t kChunk = size_t{1} << 20;
  while (true) {
    const size_t used = text.size();
    if (used > limit) return false;
    text.resize(used + kChunk);  // a bad_alloc leaves nothing half read: the caller stops
    const ssize_t got = ::read(fd, text.data() + used, kChunk);
    if (got < 0 && errno == EINTR) {
      text.resize(used);
      continue;
    }
    check(got >= 0, "error while reading '", path, "': ", std::strerror(errno));
    text.resize(used + static_cast<size_t>(got));
    if (got == 0) return true;
  }
}

}  // namespace

std::string read_text_file(const std::string& path) {
  struct stat status {};
  check(::stat(path.c_str(), &status) == 0, "cannot read '", path, "': ", std::strerror(errno));
  check(!S_ISDIR(status.st_mode), "'", path, "' is a directory; give a text file");
  // A device (/dev/zero, /dev/urandom) or a socket could be read without end.
  check(S_ISREG(status.st_mode) || S_ISFIFO(status.st_mode), "'", path,
        "' is a device or a socket, not a file; give a text file");
  // A pipe is opened without waiting for a writer (one that has none reads as empty), then read blocking.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (S_ISFIFO(status.st_mode) ? O_NONBLOCK : 0));
  check(fd >= 0, "cannot read '", path, "': ", std::strerror(errno));
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  std::string text;
  if (S_ISFIFO(status.st_mode)) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    check(read_all(fd, path, text, kMaxPipedTextBytes), "'", path, "' is a pipe that gave more than ",
          kMaxPipedTextBytes >> 20, " MB; write the text to a file (or use tinygpt prepare, which streams)");
    return text;
  }
  // A regular file is sized first: the memory for all of it, or std::bad_alloc, never a text cut short.
  text.resize(static_cast<size_t>(status.st_size));
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t got = ::read(fd, text.data() + done, text.size() - done);
    if (got < 0 && errno == EINTR) continue;
    check(got >= 0, "error while reading '", path, "': ", std::strerror(errno));
    if (got == 0) break;  // the file was cut shorter while it was read
    done += static_cast<size_t>(got);
  }
  text.resize(done);
  return text;
}

void InMemoryTokens::copy_window(int64_t start, int64_t count, int64_t* out) const {
  std::copy(ids_.begin() + start, ids_.begin() + start + count, out);
}

namespace {

std::shared_ptr<const TokenSource> in_memory(std::vector<int64_t>::const_iterator begin,
                                             std::vector<int64_t>::const_iterator end) {
  std::vector<int32_t> ids;
  ids.reserve(static_cast<size_t>(end - begin));
  for (auto id = begin; id != end; ++id) {
    check(*id >= 0 && *id <= std::numeric_limits<int32_t>::max(), "token id ", *id,
          " is outside the range of a vocabulary (0 to 2^31 - 1)");
    ids.push_back(static_cast<int32_t>(*id));
  }
  return std::make_shared<InMemoryTokens>(std::move(ids));
}

}  // namespace

TokenSplit::TokenSplit(std::string name, const std::vector<int64_t>& ids)
    : name_(std::move(name)), source_(in_memory(ids.begin(), ids.end())) {}

std::vector<int64_t> TokenSplit::ids(int64_t start, int64_t count) const {
  check(start >= 0 && count >= 0 && count <= size() - start, "the ", name_, " split has ", size(),
        " tokens; tokens ", start, " to ", start + count, " are out of range");
  std::vector<int64_t> ids(static_cast<size_t>(count));
  source_->copy_window(start, count, ids.data());
  return ids;
}

Batch TokenSplit::sample_batch(int64_t batch_size, int64_t block_size, Generator& generator) const {
  check(batch_size > 0 && block_size > 0, "sample_batch: batch size ", batch_size, " and block size ", block_size,
        " must be positive");
  // A window needs T+1 ids; starts range over [0, size - T - 1].
  check(size() > block_size, "sample_batch: the ", name_, " split has ", size(), " tokens, too few for one window of ",
        block_size + 1, " (block size ", block_size, " + 1); use a longer text or a smaller --block-size");
  const uint64_t start_count = static_cast<uint64_t>(size() - block_size);
  Batch batch{Tensor::empty({batch_size, block_size}, DType::Int64),
              Tensor::empty({batch_size, block_size}, DType::Int64)};
  int64_t* inputs = batch.inputs.data<int64_t>();    // (B, T)
  int64_t* targets = batch.targets.data<int64_t>();  // (B, T)
  std::vector<int64_t> window(static_cast<size_t>(block_size + 1));  // T+1 ids
  for (int64_t row = 0; row < batch_size; ++row) {
    const int64_t start = static_cast<int64_t>(generator.next_below(start_count));
    source_->copy_window(start, block_size + 1, window.data());
    std::copy(window.begin(), window.end() - 1, inputs + row * block_size);
    std::copy(window.begin() + 1, window.end(), targets + row * block_size);
  }
  return batch;
}

TokenSplits split_by_position(const std::vector<int64_t>& ids, double train_fraction) {
  check(train_fraction > 0 && train_fraction < 1, "split_by_position: train fraction ", train_fraction,
        " must be in (0, 1)");
  const auto train_size = static_cast<std::ptrdiff_t>(static_cast<double>(ids.size()) * train_fraction);
  return TokenSplits{TokenSplit("train", in_memory(ids.begin(), ids.begin() + train_size)),
                     TokenSplit("val", in_memory(ids.begin() + train_size, ids.end()))};
}

}  // namespace tg
