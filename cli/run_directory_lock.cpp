#include "cli/run_directory_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "tinygpt/tensor/error.h"

namespace tg::cli {

RunDirectoryLock::RunDirectoryLock(const std::string& directory) {
  std::filesystem::create_directories(directory);
  const std::string path = (std::filesystem::path(directory) / ".tinygpt.lock").string();
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  check(fd_ >= 0, "train: cannot create the lock file ", path, ": ", std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  const int error = errno;
  ::close(fd_);
  fd_ = -1;
  check(error != EWOULDBLOCK, "train: another tinygpt is training in ", directory,
        " right now; wait for it to end (or stop it), or give this run another --out");
  fail("train: cannot lock ", path, ": ", std::strerror(error));
}

RunDirectoryLock::~RunDirectoryLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the lock
}

}  // namespace tg::cli
