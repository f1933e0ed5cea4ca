// tinygpt sample: continues a prompt with a trained checkpoint.
//
//   tinygpt sample --ckpt out/shakespeare --prompt "ROMEO:" --tokens 300 --temperature 0.8 --top-k 40
//
// stdout gets the prompt and its continuation, streamed as the tokens come, and
// nothing else (so it can be piped); what was loaded and any notes go to stderr.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "models/checkpoint.h"
#include "models/generate.h"
#include "tensor/error.h"
#include "tensor/threads.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/errors.h"

namespace tg::cli {

namespace {

struct SampleArguments {
  std::string checkpoint;
  std::string prompt = "\n";
  int64_t tokens = 200;
  int threads = 0;
  bool no_cache = false;
  GenerationOptions generation;
};

std::vector<int64_t> encode_prompt(const tokenizer::CharTokenizer& tokenizer, const std::string& prompt) {
  check(!prompt.empty(), "sample: --prompt is empty; give at least one character");
  try {
    const auto ids = tokenizer.encode(prompt);
    return std::vector<int64_t>(ids.begin(), ids.end());
  } catch (const tokenizer::TokenizerError& error) {
    fail("sample: --prompt: ", error.what());
  }
}

void run_sample(const CLI::App& command, SampleArguments arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  arguments.generation.sampling.validate();  // before anything is printed
  const std::string path = find_checkpoint_for_sampling(arguments.checkpoint);
  const Checkpoint checkpoint = load_checkpoint(path);
  const GPTConfig& config = checkpoint.header.config;
  GPT model(config, 0, DType::Float32, /*initialize=*/false);
  restore_parameters(checkpoint, model);
  const auto tokenizer = tokenizer::CharTokenizer::deserialize(checkpoint.header.vocabulary);
  const std::vector<int64_t> prompt = encode_prompt(tokenizer, arguments.prompt);

  char loaded[300];
  std::snprintf(loaded, sizeof loaded, "sample: %s (step %lld, best val loss %.4f), %s, %lld layers, %lld channels, "
                "block %lld; %s",
                path.c_str(), static_cast<long long>(checkpoint.header.step), checkpoint.header.best_val_loss,
                config.preset.c_str(), static_cast<long long>(config.n_layer), static_cast<long long>(config.n_embd),
                static_cast<long long>(config.block_size), arguments.no_cache ? "no KV cache" : "KV cache");
  std::cerr << loaded << "\n";

  arguments.generation.max_new_tokens = arguments.tokens;
  arguments.generation.use_cache = !arguments.no_cache;
  std::cout << arguments.prompt << std::flush;
  generate(
      model, prompt, arguments.generation,
      [&](int64_t id) {
        const tokenizer::TokenId token = static_cast<tokenizer::TokenId>(id);
        std::cout << tokenizer.decode(std::span<const tokenizer::TokenId>(&token, 1)) << std::flush;
      },
      [](const std::string& note) { std::cerr << "\nsample: note: " << note << "\n"; });
  if (isatty(STDOUT_FILENO) == 1) std::cout << "\n";  // leave the shell prompt on its own line
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto arguments = std::make_shared<SampleArguments>();
  SamplingOptions& sampling = arguments->generation.sampling;
  CLI::App* command = app.add_subcommand("sample", "Continue a prompt with a trained checkpoint");
  command->add_option("--ckpt", arguments->checkpoint,
                      "Checkpoint file, or a training directory (its best.safetensors, else model.safetensors)")
      ->required();
  command->add_option("--prompt", arguments->prompt, "Text to continue (default: a newline)");
  command->add_option("--tokens", arguments->tokens, "Tokens to generate")->capture_default_str()->check(CLI::NonNegativeNumber);
  command->add_option("--temperature", sampling.temperature, "Divide the logits by this (> 0)")->capture_default_str();
  command->add_option("--top-k", sampling.top_k, "Sample among the K most likely tokens only (0 = all)")
      ->capture_default_str();
  command->add_option("--top-p", sampling.top_p, "Sample from the smallest set of tokens with this much probability")
      ->capture_default_str();
  command->add_option("--repetition-penalty", sampling.repetition_penalty,
                      "Make tokens already in the text less likely (> 1) or more likely (< 1)")
      ->capture_default_str();
  command->add_option("--seed", arguments->generation.seed, "Seed of the sampling")->capture_default_str();
  command->add_flag("--greedy", sampling.greedy, "Always take the most likely token");
  command->add_flag("--no-cache", arguments->no_cache, "Re-run the whole window for every token (no KV cache)");
  command->add_option("--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(CLI::PositiveNumber);
  command->callback([command, arguments] { run_sample(*command, *arguments); });
}

}  // namespace tg::cli
