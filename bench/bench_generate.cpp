// Generation speed: new tokens per second with the KV cache, and without it
// (re-running the whole window for every token), after prompts of several
// lengths, for a randomly initialised model of a preset.
//
//   bench_generate --config baby --prompts 16,256,1024 --tokens 32 [--threads 2] [--kv-heads N]
//
// --kv-heads sets the key/value heads of a preset (grouped-query attention): the
// KV cache, which a long context reads for every token, holds KVH / NH of MHA's bytes.
//
// The context length is raised to fit the longest prompt plus the new tokens
// (baby's own block is 256), so every run stays inside the window, where the
// cache applies. Greedy decoding; the time includes the prompt's own forward
// (prefill). With the cache, the fused decode step (GPT::decode_step) and the
// module-by-module one (set_fused_decode(false)) are timed alternately, three
// times each; the medians are printed. The last column times the decode steps
// alone, after an untimed prefill.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Seconds to generate `tokens` new tokens after `prompt`.
double time_generation(tg::GPT& model, const std::vector<int64_t>& prompt, int64_t tokens, bool use_cache) {
  tg::GenerationOptions options;
  options.max_new_tokens = tokens;
  options.sampling.greedy = true;
  options.use_cache = use_cache;
  const auto start = std::chrono::steady_clock::now();
  tg::generate(model, prompt, options);
  return seconds_since(start);
}

// Median seconds of three generations with the cache, fused step on and off alternately.
std::pair<double, double> time_fused_and_modules(tg::GPT& model, const std::vector<int64_t>& prompt, int64_t tokens) {
  std::vector<double> fused, modules;
  for (int round = 0; round < 3; ++round) {
    fused.push_back(time_generation(model, prompt, tokens, true));
    model.set_fused_decode(false);
    modules.push_back(time_generation(model, prompt, tokens, true));
    model.set_fused_decode(true);
  }
  std::sort(fused.begin(), fused.end());
  std::sort(modules.begin(), modules.end());
  return {fused[1], modules[1]};
}

// Tokens per second of the decode steps alone, after a prefilled prompt (the
// prefill is not timed): what a long context costs each new token, the KV cache
// read included. Median of three.
double decode_only_tokens_per_second(tg::GPT& model, const std::vector<int64_t>& prompt, int64_t tokens) {
  const tg::NoGradGuard no_grad;
  std::vector<double> seconds;
  for (int round = 0; round < 3; ++round) {
    const int64_t length = static_cast<int64_t>(prompt.size());
    std::vector<tg::nn::KVCache> caches = model.make_caches(1, length + tokens);
    model.forward_cached(tg::from_vector<int64_t>(prompt, {1, length}), caches, tg::GPT::LogitPositions::Last);
    const tg::Tensor token = tg::from_vector<int64_t>({0}, {1, 1});
    const auto start = std::chrono::steady_clock::now();
    for (int64_t step = 0; step < tokens; ++step) model.forward_cached(token, caches, tg::GPT::LogitPositions::Last);
    seconds.push_back(seconds_since(start));
  }
  std::sort(seconds.begin(), seconds.end());
  return static_cast<double>(tokens) / seconds[1];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Generation tokens/s with and without the KV cache"};
  std::string preset = "baby";
  std::vector<int64_t> prompt_lengths = {16, 256, 1024};
  int64_t tokens = 32;
  int threads = 0;
  bool skip_uncached = false;
  int64_t kv_heads = 0;
  app.add_option("--config", preset, "Preset")->capture_default_str();
  app.add_option("--prompts", prompt_lengths, "Prompt lengths")->delimiter(',');
  app.add_option("--tokens", tokens, "New tokens per run")->capture_default_str();
  app.add_option("--threads", threads, "Threads (default: OMP_NUM_THREADS)");
  app.add_flag("--cache-only", skip_uncached, "Skip the runs without the cache");
  app.add_option("--kv-heads", kv_heads, "Key/value heads (default: the preset's)");
  CLI11_PARSE(app, argc, argv);
  if (threads > 0) tg::set_num_threads(threads);

  tg::GPTConfig config = tg::GPTConfig::preset_named(preset, tg::GPTConfig::preset_vocab_size(preset) > 0 ? 0 : 65);
  int64_t longest = 0;
  for (int64_t length : prompt_lengths) longest = std::max(longest, length);
  config.block_size = std::max(config.block_size, longest + tokens);
  config.dropout = 0;
  if (kv_heads > 0) config.n_kv_head = kv_heads;
  tg::GPT model(config, 1);
  std::printf("%s (block raised to %lld, %lld of %lld heads for keys and values), %s, greedy, %lld new tokens per run\n",
              preset.c_str(), static_cast<long long>(config.block_size), static_cast<long long>(config.kv_heads()),
              static_cast<long long>(config.n_head), tg::thread_info().c_str(), static_cast<long long>(tokens));
  std::printf("%8s %14s %22s %16s %8s %14s\n", "prompt", "cached tok/s", "module by module tok/s", "uncached tok/s",
              "speedup", "decode tok/s");

  tg::Generator generator(0);
  for (int64_t length : prompt_lengths) {
    const std::vector<int64_t> prompt = tg::randint({length}, 0, config.vocab_size, generator).to_vector<int64_t>();
    time_generation(model, prompt, 2, true);  // warm-up: buffers, pages
    const auto [cached, modules] = time_fused_and_modules(model, prompt, tokens);
    const double decode_only = decode_only_tokens_per_second(model, prompt, tokens);
    if (skip_uncached) {
      std::printf("%8lld %14.1f %22.1f %16s %8s %14.1f\n", static_cast<long long>(length), tokens / cached,
                  tokens / modules, "-", "-", decode_only);
      continue;
    }
    const double uncached = time_generation(model, prompt, tokens, false);
    std::printf("%8lld %14.1f %22.1f %16.1f %7.1fx %14.1f\n", static_cast<long long>(length), tokens / cached,
                tokens / modules, tokens / uncached, uncached / cached, decode_only);
  }
  return 0;
}
