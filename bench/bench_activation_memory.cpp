// Activation memory and step time of GPT training, with and without activation
// checkpointing (GPT::set_activation_checkpointing, autograd/activation_checkpoint.h).
//
//   bench_activation_memory [--config gpt2] [--batch 4] [--block 1024] [--steps 3] [--warmup 1]
//                           [--checkpoint-activations] [--dtype float32|bf16] [--threads N]
//
// Builds the preset (dropout 0; the character presets with 65 tokens, gpt2 with
// its 50257), a ParameterArena and AdamW, then runs warmup + steps training
// steps (zero_grad, loss, backward, AdamW step) on one random batch (B, T).
// Memory, in MiB:
//   state        parameters + gradients + AdamW's two moments: 4 x P x 4 bytes
//   baseline     VmRSS just before the first step, once the buffers freed while
//                building were handed back: the state plus code, libraries and
//                the allocator's own. The peak is reset there (/proc/self/clear_refs),
//                so the construction's transient peak does not count.
//   peak         VmHWM after the steps
//   activations  peak - baseline: what the steps add on top of the state (saved
//                activations, gradients in flight, tinygpt's buffer cache)
// Peak memory belongs to the whole process, so measure one configuration per
// process: bench/run_activation_memory.sh runs both modes, and searches the
// largest batch that fits a memory budget. Prints one JSON line, with the loss
// of the first step (the same in both modes: checkpointing changes no number).
// Time per step, medians over the timed steps: ms_median on the wall clock,
// cpu_ms_median the CPU time of all the process's threads. On a machine shared
// with other work, with OMP_WAIT_POLICY=passive (no thread spins while it
// waits), the CPU time stays near the quiet machine's threads x wall time when
// the wall time does not: the other work takes turns on the cores.
#include <time.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tinygpt/autograd/backward.h"
#include "bench/proc_readings.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/optim/adamw.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace {

constexpr double kMiB = 1024.0 * 1024.0;

}  // namespace

int main(int argc, char** argv) {
  tg::tune_process_environment(argv);  // the thread and BLAS settings tinygpt itself runs with
  CLI::App app{"Activation memory and step time of GPT training, with or without activation checkpointing"};
  std::string preset = "gpt2";
  int64_t batch = 4, block = 1024, steps = 3, warmup = 1;
  int threads = 0;
  bool checkpoint_activations = false;
  std::string matmul_dtype = "float32";
  app.add_option("--config", preset, "Preset: gpt2, cpu-small, baby, ...")->capture_default_str();
  app.add_option("--batch", batch, "B")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--block", block, "T: tokens per row")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--steps", steps, "Timed steps (the median is reported)")->capture_default_str()->check(CLI::PositiveNumber);
  app.add_option("--warmup", warmup, "Untimed steps first (their memory counts)")->capture_default_str();
  app.add_option("--threads", threads, "Threads (default: OMP_NUM_THREADS)");
  app.add_flag("--checkpoint-activations", checkpoint_activations,
               "Keep only each block's input; recompute its internals in the backward");
  app.add_option("--dtype", matmul_dtype, "The Linear products: float32, or bf16 (mixed precision, GPT::set_matmul_dtype)")
      ->check(CLI::IsMember({"float32", "bf16"}))
      ->capture_default_str();
  CLI11_PARSE(app, argc, argv);
  try {
    if (threads > 0) tg::set_num_threads(threads);
    tg::GPTConfig config = tg::GPTConfig::preset_named(preset, tg::GPTConfig::preset_vocab_size(preset) > 0 ? 0 : 65);
    config.block_size = std::max(config.block_size, block);
    config.dropout = 0;
    tg::GPT model(config, 1);
    model.set_activation_checkpointing(checkpoint_activations);
    model.set_matmul_dtype(matmul_dtype == "bf16" ? tg::DType::BFloat16 : tg::DType::Float32);
    tg::nn::ParameterArena arena(model);
    tg::nn::AdamW optimizer(arena, tg::nn::AdamWOptions{});
    tg::Generator generator(0);
    const tg::Tensor ids = tg::randint({batch, block + 1}, 0, config.vocab_size, generator);
    const tg::Tensor inputs = tg::raw::contiguous(tg::raw::narrow(ids, 1, 0, block));   // (B, T)
    const tg::Tensor targets = tg::raw::contiguous(tg::raw::narrow(ids, 1, 1, block));  // (B, T)

    bench::release_memory();
    const double baseline = bench::status_bytes("VmRSS");
    bench::reset_peak_rss();
    double first_loss = 0;
    std::vector<double> milliseconds, cpu_milliseconds;
    const auto cpu_ms = [] {  // CPU time of every thread of the process
      timespec now{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
      return static_cast<double>(now.tv_sec) * 1e3 + static_cast<double>(now.tv_nsec) / 1e6;
    };
    for (int64_t step = 0; step < warmup + steps; ++step) {
      const auto started = std::chrono::steady_clock::now();
      const double cpu_started = cpu_ms();
      arena.zero_grad();
      const tg::Tensor loss = model.loss(inputs, targets);
      if (step == 0) first_loss = loss.item<double>();
      tg::backward(loss);
      optimizer.step();
      const std::chrono::duration<double, std::milli> elapsed = std::chrono::steady_clock::now() - started;
      if (step >= warmup) {
        milliseconds.push_back(elapsed.count());
        cpu_milliseconds.push_back(cpu_ms() - cpu_started);
      }
    }
    const double peak = bench::status_bytes("VmHWM");
    std::sort(milliseconds.begin(), milliseconds.end());
    std::sort(cpu_milliseconds.begin(), cpu_milliseconds.end());
    const double state = 4.0 * static_cast<double>(model.parameter_count()) * sizeof(float);
    const nlohmann::json result = {{"config", preset},
                                   {"parameters", model.parameter_count()},
                                   {"batch", batch},
                                   {"block", block},
                                   {"checkpoint_activations", checkpoint_activations},
                                   {"dtype", matmul_dtype},
                                   {"cpu", bench::cpu_model_name()},
                                   {"threads", tg::num_threads()},
                                   {"state_mib", state / kMiB},
                                   {"baseline_rss_mib", baseline / kMiB},
                                   {"peak_rss_mib", peak / kMiB},
                                   {"activation_mib", (peak - baseline) / kMiB},
                                   {"peak_minus_state_mib", (peak - state) / kMiB},
                                   {"ms_median", milliseconds[milliseconds.size() / 2]},
                                   {"cpu_ms_median", cpu_milliseconds[cpu_milliseconds.size() / 2]},
                                   {"first_loss", first_loss}};
    std::cout << result.dump() << std::endl;
  } catch (const std::exception& error) {
    std::cerr << "bench_activation_memory: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
