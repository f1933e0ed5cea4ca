// One training step of a GPT, timed: forward, backward, AdamW (no clipping), on
// a random batch, as bench/torch_reference.py does the same step in PyTorch.
//
//   bench_train_step --config cpu-small --batch 4 --block 64 --iters 20 [--threads 2] [--profile]
//
// Prints one JSON line: the config, parameters, median and mean ms per step,
// tokens/s, the peak resident memory of this process (getrusage's max RSS,
// so run one config per process: bench/run_train_vs_torch.sh does), the page
// faults per timed step (memory mapped afresh) and the thread and BLAS settings.
// --profile runs as many steps again after the timed ones, times their op
// families and prints the table of tinygpt train --profile
// (inspect/profile_table.h) on stderr, so stdout stays the one JSON line; the
// timed steps stay free of the profiler's clock reads.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/inspect/profile_table.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/optim/adamw.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace {

long minor_page_faults() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_minflt;
}

double peak_rss_megabytes() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_maxrss) / 1024.0;  // ru_maxrss is in kilobytes on Linux
}

}  // namespace

int main(int argc, char** argv) {
  tg::tune_process_environment(argv);  // the thread and BLAS settings tinygpt itself runs with
  CLI::App app{"Time one GPT training step (forward, backward, AdamW)"};
  std::string preset = "cpu-small";
  int64_t batch = 4, block = 64, iters = 20, warmup = 3;
  int threads = 0;
  bool profile = false;
  std::string matmul_dtype = "float32";
  app.add_option("--config", preset, "Preset: cpu-small, baby, gpt2")->capture_default_str();
  app.add_option("--batch", batch, "B")->capture_default_str();
  app.add_option("--block", block, "T: tokens per row")->capture_default_str();
  app.add_option("--iters", iters, "Timed steps")->capture_default_str();
  app.add_option("--warmup", warmup, "Untimed steps first")->capture_default_str();
  app.add_option("--threads", threads, "Threads (default: OMP_NUM_THREADS)");
  app.add_flag("--profile", profile, "Print where the timed steps' time goes, by op family, on stderr");
  app.add_option("--dtype", matmul_dtype, "The Linear products: float32, or bf16 (mixed precision)")
      ->check(CLI::IsMember({"float32", "bf16"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (threads > 0) tg::set_num_threads(threads);
    // The character-level presets take tiny Shakespeare's 65 characters; the others keep their own vocabulary.
    tg::GPTConfig config = tg::GPTConfig::preset_named(preset, tg::GPTConfig::preset_vocab_size(preset) > 0 ? 0 : 65);
    config.block_size = std::max(config.block_size, block);
    config.dropout = 0;  // as in the PyTorch reference
    tg::GPT model(config, 1);
    model.set_matmul_dtype(matmul_dtype == "bf16" ? tg::DType::BFloat16 : tg::DType::Float32);
    tg::nn::ParameterArena arena(model);
    tg::nn::AdamWOptions options;
    options.lr = 1e-4;
    tg::nn::AdamW optimizer(arena, options);
    tg::Generator generator(0);
    const tg::Tensor ids = tg::randint({batch, block + 1}, 0, config.vocab_size, generator);
    const tg::Tensor inputs = tg::raw::contiguous(tg::raw::narrow(ids, 1, 0, block));   // (B, T)
    const tg::Tensor targets = tg::raw::contiguous(tg::raw::narrow(ids, 1, 1, block));  // (B, T)

    // Warm-up steps, timed steps, then with --profile as many profiled steps
    // again: the profiler's clock reads stay out of the timed ones.
    std::vector<double> milliseconds;
    long faults_during_timed_steps = 0;
    const int64_t timed_end = warmup + iters, steps = timed_end + (profile ? iters : 0);
    for (int64_t step = 0; step < steps; ++step) {
      if (step == warmup) faults_during_timed_steps = -minor_page_faults();
      if (step == timed_end) faults_during_timed_steps += minor_page_faults();
      const auto started = std::chrono::steady_clock::now();
      {
        const tg::ProfiledStep profiled(step >= timed_end);
        arena.zero_grad();
        tg::backward(model.loss(inputs, targets));
        optimizer.step();
      }
      const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - started;
      if (step >= warmup && step < timed_end) milliseconds.push_back(elapsed.count());
    }
    if (!profile) faults_during_timed_steps += minor_page_faults();
    std::vector<double> sorted = milliseconds;
    std::sort(sorted.begin(), sorted.end());
    const double median = sorted[sorted.size() / 2];
    const double mean = std::accumulate(sorted.begin(), sorted.end(), 0.0) / static_cast<double>(sorted.size());
    nlohmann::json result = {{"impl", "tinygpt"},
                             {"config", preset},
                             {"parameters", model.parameter_count()},
                             {"batch", batch},
                             {"block", block},
                             {"dtype", matmul_dtype},
                             {"threads", tg::num_threads()},
                             {"ms_median", median},
                             {"ms_mean", mean},
                             {"tokens_per_s", static_cast<double>(batch * block) / (median / 1e3)},
                             {"peak_rss_mb", peak_rss_megabytes()},
                             {"page_faults_per_step", static_cast<double>(faults_during_timed_steps) /
                                                          static_cast<double>(iters)},
                             {"runtime", tg::process_environment_info()}};
    if (profile) {  // the GEMM bound too: the step's matrix-product FLOPs at this machine's sgemm speed
      const tg::ProfileRecord record = tg::profile_record();
      const tg::inspect::SgemmSpeed sgemm = tg::inspect::measure_sgemm(record.largest_gemm);
      const double flops_per_step = record.flops() / static_cast<double>(record.steps);
      result["matrix_gflop_per_step"] = flops_per_step / 1e9;
      result["sgemm_gflops"] = sgemm.gflops;
      result["gemm_bound_ms"] = flops_per_step / sgemm.gflops / 1e6;
      tg::inspect::print_profile_table(std::cerr, record, sgemm);
    }
    std::cout << result.dump() << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "bench_train_step: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
