// Writing a file so that a crash never leaves half of it: the bytes go to a
// temporary file in the same directory, which is flushed to disk (fsync) and
// then renamed over the target. Readers see the old file or the new one.
//
//   AtomicFile file(path, "save_safetensors");
//   file.write(header.data(), header.size());
//   ...
//   file.commit();                  // without it, the temporary file is removed
//
//   write_file_atomically(path, text, "export");   // the same for one string
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tg {

class AtomicFile {
 public:
  // `who` starts every error message (tg::Error naming the file and errno's text).
  AtomicFile(std::string target, std::string who);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(const void* bytes, size_t count);
  // Drops every byte from `size` on; later writes continue at `size`.
  void truncate(uint64_t size);
  // Where the bytes are until commit(), e.g. to read back what was written.
  const std::string& temporary_path() const { return path_; }
  // fsync, close, rename over the target, then fsync the directory (best effort).
  void commit();

 private:
  [[noreturn]] void fail_io(const char* what) const;

  std::string target_;
  std::string who_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& who);

// Removes the temporary files that writes of `target` left behind when their
// process was killed mid-write (TARGET.tmp.PID.N whose PID no longer runs);
// those of a live process are kept. Returns how many were removed.
int remove_stale_temporary_files(const std::string& target);

}  // namespace tg
