#include "tinygpt/models/memory_check.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

std::string gigabytes(double bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f GB", bytes / 1e9);
  return text;
}

}  // namespace

int64_t available_memory_bytes() {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  int64_t kilobytes = 0;
  std::string unit;
  while (meminfo >> key >> kilobytes >> unit)
    if (key == "MemAvailable:") return kilobytes * 1024;
  return static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * static_cast<int64_t>(::sysconf(_SC_PAGESIZE));
}

void check_model_fits(const GPTConfig& config) {
  const double parameters = static_cast<double>(config.parameter_count());
  const double weight_bytes = 4 * parameters;  // float32
  const double available = static_cast<double>(available_memory_bytes());
  check(weight_bytes <= available, "GPT: this config (", config.n_layer, " layers, ", config.n_embd, " channels, vocabulary ",
        config.vocab_size, ") has ", parameters, " parameters, ", gigabytes(weight_bytes),
        " of float32 weights alone; this machine has ", gigabytes(available), " of memory available");
}

}  // namespace tg
