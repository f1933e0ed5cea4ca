// A fuzzer's input as a file, for the readers that take a path (safetensors,
// checkpoints) and map or read it themselves. The bytes go into an anonymous
// in-memory file (memfd_create): nothing touches the disk, no name is left
// behind when a run is killed, and /proc/self/fd/N opens it like any file.
#pragma once
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

namespace tg::fuzz {

class MemoryFile {
 public:
  MemoryFile(const uint8_t* data, size_t size) : fd_(::memfd_create("fuzz-input", MFD_CLOEXEC)) {
    // A failure here is the harness's, not the library's: stop loudly.
    if (fd_ < 0) std::abort();
    for (size_t written = 0; written < size;) {
      const ssize_t count = ::write(fd_, data + written, size - written);
      if (count <= 0) std::abort();
      written += static_cast<size_t>(count);
    }
  }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;

  std::string path() const { return "/proc/self/fd/" + std::to_string(fd_); }

 private:
  int fd_;
};

}  // namespace tg::fuzz
