#include "tinygpt/datasets/spooled_stream.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <vector>

#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

constexpr const char* kWho = "prepare";
constexpr std::size_t kBlockBytes = std::size_t{1} << 20;
// How long a named pipe may stay without a writer: `mkfifo f; prepare --data f`
// with nothing writing into f is a mistake to report, not a wait without end.
constexpr int kWriterWaitMilliseconds = 10'000;

bool is_standard_input(const std::string& source) { return source == "-"; }

// The stream open for reading; standard input is used as it is (and left open).
struct StreamDescriptor {
  int fd = -1;
  bool owned = false;
  ~StreamDescriptor() {
    if (owned) ::close(fd);
  }
};

}  // namespace

SourceKind source_kind(const std::string& source) {
  struct stat status {};
  if (is_standard_input(source)) {
    check(::fstat(STDIN_FILENO, &status) == 0, kWho, ": cannot read standard input ('-'): ", std::strerror(errno));
    check(S_ISFIFO(status.st_mode) || S_ISREG(status.st_mode) || S_ISSOCK(status.st_mode), kWho,
          ": standard input ('-') is a terminal or a device; pipe the text in, or give a file");
    return SourceKind::stream;
  }
  check(::stat(source.c_str(), &status) == 0, "cannot read '", source, "': ", std::strerror(errno));
  check(!S_ISDIR(status.st_mode), "'", source, "' is a directory; give a text file");
  check(S_ISREG(status.st_mode) || S_ISFIFO(status.st_mode), "'", source,
        "' is a device or a socket, not a file; give a text file");
  return S_ISREG(status.st_mode) ? SourceKind::file : SourceKind::stream;
}

SpooledStream::SpooledStream(const std::string& source, const std::string& directory, uint64_t limit_bytes,
                             ProgressLine& progress)
    : copy_((std::filesystem::path(directory) / kStreamCopyName).string(),
            std::string(kWho) + ": copying '" + source + "'") {
  // A path is opened without waiting for a writer (open() on a named pipe would
  // wait for one without end), so that the wait below can give up.
  StreamDescriptor stream;
  if (is_standard_input(source)) {
    stream.fd = STDIN_FILENO;
  } else {
    stream.fd = ::open(source.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    check(stream.fd >= 0, "cannot read '", source, "': ", std::strerror(errno));
    stream.owned = true;
  }
  // A read of 0 bytes is the end of the stream once a writer has been seen. Before,
  // it is a named pipe that no program has opened yet: poll() wakes when one
  // writes, or opens and closes it (POLLHUP), and gives up after the wait.
  bool writer_seen = is_standard_input(source);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWriterWaitMilliseconds);
  Xxh3Hasher hasher;
  std::vector<char> block(kBlockBytes);
  while (true) {
    const ssize_t got = ::read(stream.fd, block.data(), block.size());
    if (got > 0) {
      writer_seen = true;
      bytes_ += got;
      check(static_cast<uint64_t>(bytes_) <= limit_bytes, kWho, ": '", source, "' is a stream of more than ",
            limit_bytes, " bytes, more than prepare copies into '", directory,
            "' (half the space free there when it started); give the text as a file");
      hasher.update(block.data(), static_cast<std::size_t>(got));
      copy_.write(block.data(), static_cast<std::size_t>(got));
      progress.add(got, 0);
      continue;
    }
    if (got == 0 && writer_seen) break;
    if (got < 0 && errno == EINTR) continue;
    check(got == 0 || errno == EAGAIN, "error while reading '", source, "': ", std::strerror(errno));
    if (got < 0) writer_seen = true;  // EAGAIN: a writer has it open and has written nothing yet
    int timeout = -1;
    if (!writer_seen) {
      const auto left = deadline - std::chrono::steady_clock::now();
      timeout = static_cast<int>(std::max<int64_t>(0, std::chrono::ceil<std::chrono::milliseconds>(left).count()));
    }
    pollfd readable{stream.fd, POLLIN, 0};
    const int ready = ::poll(&readable, 1, timeout);
    check(ready != 0, kWho, ": '", source, "' is a named pipe that no program wrote into within ",
          kWriterWaitMilliseconds / 1000, " s; start the program that writes it first");
    if (ready > 0) writer_seen = true;
  }
  progress.finish();
  xxh3_ = hasher.digest();
}

uint64_t default_stream_limit_bytes(const std::string& directory) {
  std::error_code error;
  const std::filesystem::space_info space = std::filesystem::space(directory, error);
  check(!error, kWho, ": cannot tell the free space in '", directory, "': ", error.message());
  return space.available / 2;
}

}  // namespace tg
