// A batch's windows from a prepared dataset's token file (datasets/token_file.h):
// TokenFile reads each window with pread(2); beside it, the memory map it
// replaced (a map that another program shrinks kills the reader with SIGBUS),
// on the same file in the page cache. Items are windows.
//
//   build/release/bench/bench_token_windows
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "tinygpt/datasets/token_file.h"

namespace {

constexpr int64_t kTokens = int64_t{64} << 20;  // 128 MB of uint16 ids
constexpr int64_t kWindow = 257;                // block 256 + its target

const std::string& token_file() {
  static const std::string path = [] {
    const std::string file = (std::filesystem::temp_directory_path() / "tinygpt_bench_tokens.bin").string();
    std::vector<uint16_t> ids(static_cast<size_t>(kTokens));
    for (size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<uint16_t>(i % 50257);
    std::ofstream(file, std::ios::binary).write(reinterpret_cast<const char*>(ids.data()),
                                               static_cast<std::streamsize>(ids.size() * sizeof(uint16_t)));
    return file;
  }();
  return path;
}

void BM_WindowsByPread(benchmark::State& state) {
  const tg::TokenFile file(token_file(), tg::TokenDType::uint16, 50257);
  std::mt19937_64 random(1);
  std::vector<int64_t> window(kWindow);
  for (auto _ : state) {
    file.copy_window(static_cast<int64_t>(random() % (kTokens - kWindow)), kWindow, window.data());
    benchmark::DoNotOptimize(window.data());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_WindowsByPread);

void BM_WindowsFromMap(benchmark::State& state) {
  const int fd = ::open(token_file().c_str(), O_RDONLY);
  const size_t bytes = static_cast<size_t>(kTokens) * sizeof(uint16_t);
  const auto* ids = static_cast<const uint16_t*>(::mmap(nullptr, bytes, PROT_READ, MAP_PRIVATE, fd, 0));
  std::mt19937_64 random(1);
  std::vector<int64_t> window(kWindow);
  for (auto _ : state) {
    const int64_t start = static_cast<int64_t>(random() % (kTokens - kWindow));
    for (int64_t i = 0; i < kWindow; ++i) window[static_cast<size_t>(i)] = ids[start + i];
    benchmark::DoNotOptimize(window.data());
  }
  state.SetItemsProcessed(state.iterations());
  ::munmap(const_cast<uint16_t*>(ids), bytes);
  ::close(fd);
}
BENCHMARK(BM_WindowsFromMap);

}  // namespace

BENCHMARK_MAIN();
