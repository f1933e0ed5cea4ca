// Inference speed of a randomly initialised GPT (the gpt2 124M shape by default),
// as bench/torch_gpt2_inference.py measures the same in PyTorch:
//
//   forward   ms for one forward of batch 1 x prompt tokens (logits of every position)
//   cached    new tokens/s of greedy generation after the prompt, with the KV cache
//   cached_modules  the same with the fused decode step off (GPT::set_fused_decode):
//             each step module by module, one parallel region per weight matrix
//   uncached  the same, re-running the whole window for every token
//
//   bench_gpt2_inference --config gpt2 --prompt 64 --tokens 32 [--threads 2] [--weight-format int8]
//   bench_gpt2_inference --config gpt2 --save-weights FILE   (writes the weights, then exits)
//   bench_gpt2_inference --config smollm2-135m --save-hf DIR  (the Hugging Face layout, BF16, then exits)
//   bench_gpt2_inference --weights DIR --weight-format float32,bf16,int8   (a published layout, as loaded
//                        by --weights; "load_ms" is the time to load it in each format)
//
// Several weight formats (--weight-format float32,bf16,int8) build one model
// each, from the same initial weights, and take turns run by run: the machine
// drifts between a fast and a slow state within seconds, so each run of one
// format has a run of the others beside it, and a ratio of two formats is best
// taken run by run (the "runs" arrays; bench/run_quantized_inference.sh).
//
// Generation runs tg::generate, timed through its token callback: the first token
// arrives after the prompt's forward (prefill), so the decode rate is the tokens
// after the first over the time from the first to the last. The rate including
// the prefill is printed too. The prompt is Generator(0)'s randint, stored in the
// weights file's metadata so the PyTorch side reads the same one.
// Prints one JSON line per format (bench/run_gpt2_inference.sh collects them),
// with the greedy tokens of both generation modes for the cross-check.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace {

using Clock = std::chrono::steady_clock;

double milliseconds_between(Clock::time_point start, Clock::time_point end) {
  return std::chrono::duration<double, std::milli>(end - start).count();
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

struct GenerationTiming {
  double decode_tokens_per_s, total_tokens_per_s, prefill_ms;
  std::vector<int64_t> tokens;
};

// One greedy generation of `tokens` new tokens after `prompt`.
GenerationTiming time_generation(tg::GPT& model, const std::vector<int64_t>& prompt, int64_t tokens, bool use_cache) {
  tg::GenerationOptions options;
  options.max_new_tokens = tokens;
  options.sampling.greedy = true;
  options.use_cache = use_cache;
  std::vector<Clock::time_point> arrivals;
  const auto start = Clock::now();
  std::vector<int64_t> generated = tg::generate(model, prompt, options, [&](int64_t) {
    arrivals.push_back(Clock::now());
    return true;
  });
  const double total_ms = milliseconds_between(start, arrivals.back());
  const double decode_ms = milliseconds_between(arrivals.front(), arrivals.back());
  return {static_cast<double>(tokens - 1) / (decode_ms / 1e3), static_cast<double>(tokens) / (total_ms / 1e3),
          milliseconds_between(start, arrivals.front()), std::move(generated)};
}

// Each format's models: its name and the model in it.
struct FormatModel {
  std::string format;
  tg::GPT* model;
};

// `runs` generations of each model (after one untimed warm-up each), the models
// taking turns run by run: per model, the medians and every run's figures.
std::vector<nlohmann::json> generation_figures(const std::vector<FormatModel>& models, const std::vector<int64_t>& prompt,
                                               int64_t tokens, bool use_cache, int64_t runs) {
  for (const FormatModel& entry : models) time_generation(*entry.model, prompt, std::min<int64_t>(tokens, 4), use_cache);
  std::vector<std::vector<double>> decode(models.size()), total(models.size()), prefill(models.size());
  std::vector<std::vector<int64_t>> generated(models.size());
  for (int64_t run = 0; run < runs; ++run)
    for (size_t index = 0; index < models.size(); ++index) {
      GenerationTiming timing = time_generation(*models[index].model, prompt, tokens, use_cache);
      decode[index].push_back(timing.decode_tokens_per_s);
      total[index].push_back(timing.total_tokens_per_s);
      prefill[index].push_back(timing.prefill_ms);
      generated[index] = std::move(timing.tokens);
    }
  std::vector<nlohmann::json> figures;
  for (size_t index = 0; index < models.size(); ++index)
    figures.push_back({{"decode_tokens_per_s", median(decode[index])},
                       {"tokens_per_s_with_prefill", median(total[index])},
                       {"prefill_ms", median(prefill[index])},
                       {"runs", {{"decode_tokens_per_s", decode[index]}, {"prefill_ms", prefill[index]}}},
                       {"tokens", generated[index]}});
  return figures;
}

// Median ms of one forward over the prompt per model (the models taking turns
// forward by forward), every forward's ms, and the last position's first logits.
std::vector<nlohmann::json> forward_figures(const std::vector<FormatModel>& models, const std::vector<int64_t>& prompt,
                                            int64_t iters) {
  tg::NoGradGuard no_grad;
  const tg::Tensor ids = tg::from_vector(prompt, {1, static_cast<int64_t>(prompt.size())});  // (1, T)
  std::vector<tg::Tensor> logits;
  for (const FormatModel& entry : models) {
    entry.model->eval();
    logits.push_back(entry.model->forward(ids));  // warm-up
  }
  std::vector<std::vector<double>> milliseconds(models.size());
  for (int64_t iter = 0; iter < iters; ++iter)
    for (size_t index = 0; index < models.size(); ++index) {
      const auto start = Clock::now();
      logits[index] = models[index].model->forward(ids);
      milliseconds[index].push_back(milliseconds_between(start, Clock::now()));
    }
  std::vector<nlohmann::json> figures;
  for (size_t index = 0; index < models.size(); ++index) {
    const tg::Tensor last = tg::raw::select(tg::raw::select(logits[index], 0, 0), 0, ids.size(1) - 1);  // (V)
    const std::vector<float> head = tg::raw::narrow(last, 0, 0, 4).to_vector<float>();
    const double ms = median(milliseconds[index]);
    figures.push_back({{"ms", ms},
                       {"tokens_per_s", static_cast<double>(prompt.size()) / (ms / 1e3)},
                       {"runs", {{"ms", milliseconds[index]}}},
                       {"last_logits_head", head}});
  }
  return figures;
}

std::string joined(const std::vector<int64_t>& ids) {
  std::string text;
  for (int64_t id : ids) text += (text.empty() ? "" : ",") + std::to_string(id);
  return text;
}

}  // namespace

int main(int argc, char** argv) {
  tg::tune_process_environment(argv);  // as the tinygpt program does (tensor/runtime/process_environment.h)
  tg::start_adapting_threads_to_load();  // and its thread count follows the load, as there
  CLI::App app{"Forward and generation speed of a GPT at batch 1"};
  std::string preset = "gpt2", save_weights, save_hf, weights_directory;
  std::vector<std::string> weight_formats = {"float32"};
  std::vector<std::string> modes = {"forward", "cached", "uncached"};
  int64_t prompt_length = 64, tokens = 32, forward_iters = 10, cached_runs = 3, uncached_runs = 1;
  int threads = 0;
  app.add_option("--config", preset, "Preset")->capture_default_str();
  app.add_option("--prompt", prompt_length, "Prompt tokens (and the forward's length)")->capture_default_str();
  app.add_option("--tokens", tokens, "New tokens per generation (>= 2)")->capture_default_str();
  app.add_option("--forward-iters", forward_iters, "Timed forwards")->capture_default_str();
  app.add_option("--cached-runs", cached_runs, "Timed generations with the cache")->capture_default_str();
  app.add_option("--uncached-runs", uncached_runs, "Timed generations without it")->capture_default_str();
  app.add_option("--modes", modes, "Which of forward,cached,cached_modules,uncached to run")->delimiter(',')->capture_default_str();
  app.add_option("--threads", threads, "Threads (default: OMP_NUM_THREADS)");
  app.add_option("--weight-format", weight_formats,
                 "float32, bf16 or int8 (nn/quantize.h); several, comma-separated, take turns run by run")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--save-weights", save_weights, "Write the weights and the prompt (safetensors), then exit");
  app.add_option("--save-hf", save_hf, "Write the preset's random weights in the Hugging Face layout (BF16), then exit");
  app.add_option("--weights", weights_directory, "Load a Hugging Face model directory instead of a preset");
  CLI11_PARSE(app, argc, argv);
  try {
    tg::check(tokens >= 2 && prompt_length >= 1, "bench_gpt2_inference: needs --tokens >= 2 and --prompt >= 1");
    if (threads > 0) tg::set_num_threads(threads);
    tg::GPTConfig config = weights_directory.empty()
                               ? tg::GPTConfig::preset_named(preset, tg::GPTConfig::preset_vocab_size(preset) > 0 ? 0 : 65)
                               : tg::hf_llama_config(tg::read_hf_config_json(weights_directory), weights_directory).config;
    config.block_size = std::max(config.block_size, prompt_length + tokens);
    config.dropout = 0;
    if (!weights_directory.empty()) preset = weights_directory;
    tg::GPT model(config, 1, tg::DType::Float32, /*initialize=*/weights_directory.empty());
    tg::Generator generator(0);
    const std::vector<int64_t> prompt =
        tg::randint({prompt_length}, 0, config.vocab_size, generator).to_vector<int64_t>();

    if (!save_weights.empty()) {
      std::vector<tg::NamedTensor> tensors;
      for (const auto& [name, parameter] : model.named_parameters()) tensors.push_back({name, parameter});
      tg::save_safetensors(save_weights, tensors, {{"config", config.to_json().dump()}, {"prompt", joined(prompt)}});
      return 0;
    }

    if (!save_hf.empty()) {
      tg::export_hf_model(model, {}, save_hf, tg::DType::BFloat16);
      return 0;
    }

    // One model per format, each from the same initial weights (seed 1), or each loaded from --weights.
    std::vector<std::unique_ptr<tg::GPT>> owned;
    std::vector<FormatModel> models;
    std::vector<double> load_ms;
    for (const std::string& name : weight_formats) {
      const tg::DType format = tg::nn::parse_weight_format(name);
      if (!weights_directory.empty()) {
        const auto start = std::chrono::steady_clock::now();
        tg::LoadedHfModel loaded =
            tg::load_hf_model(weights_directory, format == tg::DType::BFloat16 ? format : tg::DType::Float32);
        if (format == tg::DType::Int8) loaded.model->quantize(format);
        load_ms.push_back(1e3 * std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        models.push_back({tg::nn::weight_format_name(format), owned.emplace_back(std::move(loaded.model)).get()});
        continue;
      }
      tg::GPT& format_model = models.empty() ? model : *owned.emplace_back(std::make_unique<tg::GPT>(config, 1));
      if (format != tg::DType::Float32) format_model.quantize(format);
      models.push_back({tg::nn::weight_format_name(format), &format_model});
    }
    std::vector<nlohmann::json> results;
    for (const FormatModel& entry : models)
      results.push_back({{"side", "tinygpt"},       {"weights", entry.format},     {"config", preset},
                         {"parameters", entry.model->parameter_count()}, {"prompt", prompt_length},
                         {"new_tokens", tokens},    {"threads", tg::num_threads()}});
    for (size_t index = 0; index < load_ms.size(); ++index) results[index]["load_ms"] = load_ms[index];
    const auto wanted = [&](const char* mode) { return std::ranges::find(modes, mode) != modes.end(); };
    const auto record = [&](const char* mode, const std::vector<nlohmann::json>& figures) {
      for (size_t index = 0; index < models.size(); ++index) results[index][mode] = figures[index];
    };
    if (wanted("forward")) record("forward", forward_figures(models, prompt, forward_iters));
    if (wanted("uncached")) record("uncached", generation_figures(models, prompt, tokens, false, uncached_runs));
    if (wanted("cached")) record("cached", generation_figures(models, prompt, tokens, true, cached_runs));
    if (wanted("cached_modules")) {
      for (const FormatModel& entry : models) entry.model->set_fused_decode(false);
      record("cached_modules", generation_figures(models, prompt, tokens, true, cached_runs));
      for (const FormatModel& entry : models) entry.model->set_fused_decode(true);
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    for (nlohmann::json& result : results) {
      result["peak_rss_mb"] = static_cast<double>(usage.ru_maxrss) / 1024;  // the process's, all formats together
      std::cout << result.dump() << std::endl;
    }
  } catch (const std::exception& error) {
    std::cerr << "bench_gpt2_inference: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
