// What a benchmark reads about its own process and machine from /proc (Linux):
// resident memory now and at its peak, a way to reset that peak, and the CPU's name.
//
// Peak resident memory (VmHWM) belongs to the whole process, so a benchmark that
// reports it measures one configuration per process, or resets the peak between
// runs (reset_peak_rss).
#pragma once
#include <malloc.h>

#include <fstream>
#include <string>

#include "tinygpt/tensor/storage.h"

namespace bench {

// A field of /proc/self/status in bytes ("VmRSS": resident now, "VmHWM": its peak).
inline double status_bytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.starts_with(field + ":")) return std::stod(line.substr(field.size() + 1)) * 1024.0;  // kB
  return 0;
}

// Sets VmHWM to the current VmRSS (Linux 4.0 and later).
inline void reset_peak_rss() { std::ofstream("/proc/self/clear_refs") << "5"; }

// Gives freed memory back to the system (tinygpt's buffer cache, then malloc's
// free lists), so what is resident afterwards is what is in use.
inline void release_memory() {
  tg::Storage::release_cached();
  ::malloc_trim(0);
}

// The "model name" line of /proc/cpuinfo ("unknown" where there is none).
inline std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.starts_with("model name")) return line.substr(line.find(':') + 2);
  return "unknown";
}

}  // namespace bench
