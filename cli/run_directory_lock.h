// One training run per directory: `tinygpt train` holds an exclusive lock on
// DIR/.tinygpt.lock (flock(2)) from before it writes anything there until it
// ends. A second run into the same --out (a resume started twice, a new run
// beside a running one) is refused instead of both writing the same checkpoints
// and log. The kernel releases the lock however the process ends, kill -9 too,
// so a stale lock file never blocks anything.
#pragma once
#include <string>

namespace tg::cli {

class RunDirectoryLock {
 public:
  // Creates DIR if needed. Throws tg::Error naming DIR when another process holds it.
  explicit RunDirectoryLock(const std::string& directory);
  ~RunDirectoryLock();
  RunDirectoryLock(const RunDirectoryLock&) = delete;
  RunDirectoryLock& operator=(const RunDirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace tg::cli
