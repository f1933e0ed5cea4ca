// Loading GPT-2 from the Hugging Face layout: seconds and memory.
//
//   bench_load_gpt2 [--config gpt2] [--runs 5] [--dir DIR]
//
// Writes a randomly initialised model of the preset (default: the 124M `gpt2`)
// with export_hf_gpt2 to a temporary directory (or uses --dir as it is), reads
// the files once to warm the page cache, then times, median of --runs:
//   read   read(2) of model.safetensors into a buffer: the cost of the bytes alone
//   build  GPT(config, initialize = false): allocating and zero-filling the parameters
//   load   load_hf_gpt2: config, mapping, checks, the copies and transposes
// and the peak resident memory the load adds, against the weights' size
// (peak RSS is reset between runs through /proc/self/clear_refs).
//
// The model is written by a child process, so none of its memory (in the
// allocator or tinygpt's buffer cache) is resident in the measuring one.
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/proc_readings.h"
#include "tinygpt/models/hf_gpt2.h"

namespace {

namespace fs = std::filesystem;
using bench::release_memory, bench::reset_peak_rss, bench::status_bytes;

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

double time_read(const std::string& path, std::vector<char>& buffer) {
  const auto start = std::chrono::steady_clock::now();
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  size_t done = 0;
  for (ssize_t got = 1; got > 0 && done < buffer.size(); done += static_cast<size_t>(got))
    got = ::read(fd, buffer.data() + done, buffer.size() - done);
  ::close(fd);
  return seconds_since(start);
}

void write_model(const std::string& preset, const std::string& directory) {
  const pid_t child = ::fork();
  if (child == 0) {
    const auto start = std::chrono::steady_clock::now();
    tg::export_hf_gpt2(tg::GPT(tg::GPTConfig::preset_named(preset), 1337), directory);
    std::printf("wrote a random %s to %s in %.1f s\n", preset.c_str(), directory.c_str(), seconds_since(start));
    std::fflush(stdout);
    ::_exit(0);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) throw std::runtime_error("writing the model failed");
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Seconds and peak memory of load_hf_gpt2"};
  std::string preset = "gpt2", directory;
  int runs = 5;
  app.add_option("--config", preset, "Preset of the random model to write")->capture_default_str();
  app.add_option("--runs", runs, "Timed runs (the median is reported)")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--dir", directory, "Load this Hugging Face directory instead of writing one");
  CLI11_PARSE(app, argc, argv);

  const bool temporary = directory.empty();
  if (temporary) {
    directory = (fs::temp_directory_path() / ("tinygpt_bench_load_" + std::to_string(::getpid()))).string();
    write_model(preset, directory);
  }
  const std::string weights = (fs::path(directory) / "model.safetensors").string();
  const double file_bytes = static_cast<double>(fs::file_size(weights));
  std::vector<char> buffer(static_cast<size_t>(file_bytes));
  time_read(weights, buffer);  // warms the page cache

  std::vector<double> read_seconds, build_seconds, load_seconds, rss_growth;
  tg::GPTConfig config;
  double weight_bytes = 0;
  for (int run = 0; run < runs; ++run) {
    read_seconds.push_back(time_read(weights, buffer));

    release_memory();
    const double rss_before = status_bytes("VmRSS");
    reset_peak_rss();
    auto start = std::chrono::steady_clock::now();
    auto model = tg::load_hf_gpt2(directory);
    load_seconds.push_back(seconds_since(start));
    rss_growth.push_back(status_bytes("VmHWM") - rss_before);
    config = model->config();
    weight_bytes = static_cast<double>(model->parameter_count()) * sizeof(float);
    model.reset();

    release_memory();
    start = std::chrono::steady_clock::now();
    tg::GPT empty(config, 0, tg::DType::Float32, /*initialize=*/false);
    build_seconds.push_back(seconds_since(start));
  }
  std::vector<char>().swap(buffer);

  const double read = median(read_seconds), build = median(build_seconds), load = median(load_seconds);
  std::printf("%s: %.1f MB of weights (%lld parameters), file %.1f MB, median of %d runs, page cache warm\n",
              directory.c_str(), weight_bytes / 1e6, static_cast<long long>(weight_bytes / sizeof(float)),
              file_bytes / 1e6, runs);
  std::printf("  read(2) of the file     %.3f s  (%.2f GB/s)\n", read, file_bytes / read / 1e9);
  std::printf("  build the empty GPT     %.3f s\n", build);
  std::printf("  load_hf_gpt2            %.3f s  (%.3f s beyond the read)\n", load, load - read);
  std::printf("  peak RSS growth         %.1f MB = %.2f x the weights (max over runs %.2f x)\n",
              median(rss_growth) / 1e6, median(rss_growth) / weight_bytes,
              *std::max_element(rss_growth.begin(), rss_growth.end()) / weight_bytes);
  if (temporary) fs::remove_all(directory);
  return 0;
}
