#include "tinygpt/tensor/io/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "tinygpt/tensor/error.h"

namespace tg {

AtomicFile::AtomicFile(std::string target, std::string who) : target_(std::move(target)), who_(std::move(who)) {
  // Same directory as the target, so the final rename cannot cross file systems.
  static std::atomic<uint64_t> counter{0};
  for (int attempt = 0; fd_ < 0; ++attempt) {
    path_ = target_ + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);  // the umask applies
    if (fd_ < 0 && (errno != EEXIST || attempt > 100)) fail_io("cannot create");
  }
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(path_.c_str());
}

void AtomicFile::write(const void* bytes, size_t count) {
  const char* next = static_cast<const char*>(bytes);
  while (count > 0) {
    const ssize_t written = ::write(fd_, next, count);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) fail_io("cannot write");
    next += written;
    count -= static_cast<size_t>(written);
  }
}

void AtomicFile::truncate(uint64_t size) {
  if (::ftruncate(fd_, static_cast<off_t>(size)) != 0) fail_io("cannot truncate");
  if (::lseek(fd_, static_cast<off_t>(size), SEEK_SET) < 0) fail_io("cannot seek in");
}

// The data is on disk before the name points at it.
void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail_io("cannot flush");
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail_io("cannot close");
  if (::rename(path_.c_str(), target_.c_str()) != 0) fail_io("cannot rename over the target");
  committed_ = true;
  // Make the rename itself durable (best effort: some file systems refuse to fsync a directory).
  const std::string directory = std::filesystem::path(target_).parent_path().string();
  const int directory_fd = ::open(directory.empty() ? "." : directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory_fd >= 0) {
    ::fsync(directory_fd);
    ::close(directory_fd);
  }
}

void AtomicFile::fail_io(const char* what) const {
  // Named by the file the user asked for: the temporary one beside it is ours.
  fail(who_, ": ", what, " '", target_, "': ", std::strerror(errno));
}

int remove_stale_temporary_files(const std::string& target) {
  namespace fs = std::filesystem;
  const fs::path target_path(target);
  const fs::path directory = target_path.parent_path().empty() ? fs::path(".") : target_path.parent_path();
  const std::string prefix = target_path.filename().string() + ".tmp.";
  std::error_code error;
  int removed = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(directory, error)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(prefix, 0) != 0) continue;
    // TARGET.tmp.PID.N: the writer's process id, then its counter.
    const std::string rest = name.substr(prefix.size());
    char* end = nullptr;
    const long pid = std::strtol(rest.c_str(), &end, 10);
    if (end == rest.c_str() || *end != '.' || pid <= 0) continue;
    const bool writer_alive = ::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM;
    if (!writer_alive && fs::remove(entry.path(), error)) ++removed;
  }
  return removed;
}

void write_file_atomically(const std::string& path, std::string_view bytes, const std::string& who) {
  AtomicFile file(path, who);
  file.write(bytes.data(), bytes.size());
  file.commit();
}

}  // namespace tg
