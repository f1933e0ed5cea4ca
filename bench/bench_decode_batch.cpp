// Batched decoding (GPT::decode_batch): B sequences advanced one token each per
// step, what tinygpt serve runs for B concurrent requests. Per batch size: ms
// per step, the tokens/s of all sequences together and of each, and the ratio of
// the aggregate to batch 1's. The batch sizes are timed in turn, round after
// round (interleaved), and the median and range over the rounds are printed.
//
//   bench_decode_batch --config gpt2 --batches 1,2,4,8,16 --prompt 64 --steps 16 --rounds 5 [--quantize int8]
//
// Each sequence has its own prompt of --prompt tokens, prefilled before the
// timing; a round then times --steps batched steps (its caches start again from
// the prompt each round, so every round reads the same lengths).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/dtype.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace {

std::string cpu_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown CPU";
}

struct Batch {
  std::vector<std::vector<tg::nn::KVCache>> caches;  // per sequence
  int64_t prompt = 0;
};

// B sequences with their prompts prefilled.
Batch prefilled(tg::GPT& model, int64_t sequences, int64_t prompt, int64_t steps, tg::Generator& generator) {
  Batch batch{{}, prompt};
  for (int64_t b = 0; b < sequences; ++b) {
    batch.caches.push_back(model.make_caches(1, prompt + steps));
    const tg::Tensor ids = tg::randint({1, prompt}, 0, model.config().vocab_size, generator);
    model.forward_cached(ids, batch.caches.back(), tg::GPT::LogitPositions::Last);
  }
  return batch;
}

// Seconds for `steps` batched steps from the prompts' end.
double time_steps(tg::GPT& model, Batch& batch, int64_t steps) {
  for (auto& caches : batch.caches)
    for (tg::nn::KVCache& cache : caches) cache.length = batch.prompt;
  std::vector<std::vector<tg::nn::KVCache>*> pointers;
  for (auto& caches : batch.caches) pointers.push_back(&caches);
  const std::vector<int64_t> ids(pointers.size(), 1);
  const auto start = std::chrono::steady_clock::now();
  for (int64_t step = 0; step < steps; ++step) model.decode_batch(ids, pointers);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace

int main(int argc, char** argv) {
  tg::tune_process_environment(argv);    // the settings the tinygpt program runs with (tensor/runtime/process_environment.h)
  tg::start_adapting_threads_to_load();  // and its thread count following the load
  CLI::App app{"Batched decoding: tokens/s of B sequences advanced together"};
  std::string preset = "gpt2", quantize;
  std::vector<int64_t> batches = {1, 2, 4, 8, 16};
  int64_t prompt = 64, steps = 16;
  int rounds = 5, threads = 0;
  app.add_option("--config", preset, "Preset")->capture_default_str();
  app.add_option("--batches", batches, "Batch sizes")->delimiter(',');
  app.add_option("--prompt", prompt, "Prompt tokens per sequence")->capture_default_str();
  app.add_option("--steps", steps, "Decode steps per round")->capture_default_str();
  app.add_option("--rounds", rounds, "Rounds (the batch sizes in turn in each)")->capture_default_str();
  app.add_option("--quantize", quantize, "int8 or bf16 weights");
  app.add_option("--threads", threads, "Threads (default: OMP_NUM_THREADS)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) tg::set_num_threads(threads);

  tg::GPTConfig config = tg::GPTConfig::preset_named(preset, tg::GPTConfig::preset_vocab_size(preset) > 0 ? 0 : 65);
  config.dropout = 0;
  config.block_size = std::max(config.block_size, prompt + steps);
  tg::GPT model(config, 1);
  if (!quantize.empty()) model.quantize(quantize == "int8" ? tg::DType::Int8 : tg::DType::BFloat16);
  model.eval();
  const tg::NoGradGuard no_grad;
  std::printf("%s, %s weights, prompt %lld, %lld steps a round, %d rounds interleaved; %s; %s\n", preset.c_str(),
              quantize.empty() ? "float32" : quantize.c_str(), static_cast<long long>(prompt),
              static_cast<long long>(steps), rounds, cpu_name().c_str(), tg::thread_info().c_str());

  tg::Generator generator(0);
  std::map<int64_t, Batch> prepared;
  for (int64_t b : batches) {
    prepared[b] = prefilled(model, b, prompt, steps, generator);
    time_steps(model, prepared[b], 2);  // warm-up
  }
  std::map<int64_t, std::vector<double>> seconds;
  for (int round = 0; round < rounds; ++round)
    for (int64_t b : batches) seconds[b].push_back(time_steps(model, prepared[b], steps));

  std::printf("%6s %12s %18s %16s %14s %10s\n", "batch", "ms/step", "(range)", "tokens/s all", "tokens/s each",
              "vs batch 1");
  double first_tokens_per_second = 0;
  for (int64_t b : batches) {
    std::vector<double>& s = seconds[b];
    std::sort(s.begin(), s.end());
    const double median = s[s.size() / 2], per_step = median / static_cast<double>(steps);
    const double tokens_per_second = static_cast<double>(b * steps) / median;
    if (first_tokens_per_second == 0) first_tokens_per_second = tokens_per_second;
    char range[64];
    std::snprintf(range, sizeof range, "%.1f-%.1f", 1e3 * s.front() / static_cast<double>(steps),
                  1e3 * s.back() / static_cast<double>(steps));
    std::printf("%6lld %12.2f %18s %16.1f %14.1f %9.2fx\n", static_cast<long long>(b), 1e3 * per_step, range,
                tokens_per_second, tokens_per_second / static_cast<double>(b),
                tokens_per_second / first_tokens_per_second);
  }
  return 0;
}
