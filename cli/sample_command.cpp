// tinygpt sample: continues a prompt with a trained checkpoint or GPT-2 weights.
//
//   tinygpt sample --ckpt out/shakespeare --prompt "ROMEO:" --tokens 300 --temperature 0.8 --top-k 40
//   tinygpt sample --weights gpt2/ --prompt "The meaning of life is" --tokens 50 --top-p 0.9
//
// stdout gets the prompt and its continuation, streamed as the tokens come, and
// nothing else (so it can be piped); what was loaded and any notes go to stderr.
#include <unistd.h>

#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/model_source.h"
#include "models/generate.h"
#include "tensor/error.h"
#include "tensor/threads.h"
#include "tokenizer/errors.h"

namespace tg::cli {

namespace {

struct SampleArguments {
  ModelSourceArguments source;
  std::string prompt = "\n";
  int64_t tokens = 200;
  int threads = 0;
  bool no_cache = false;
  GenerationOptions generation;
};

std::vector<int64_t> encode_prompt(const tokenizer::TextTokenizer& tokenizer, const std::string& prompt) {
  check(!prompt.empty(), "sample: --prompt is empty; give at least one character");
  try {
    return tokenizer.encode(prompt);
  } catch (const tokenizer::TokenizerError& error) {
    fail("sample: --prompt: ", error.what());
  }
}

void run_sample(const CLI::App& command, SampleArguments arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  arguments.generation.sampling.validate();  // before anything is printed
  const LoadedModel loaded = load_model(arguments.source, "sample");
  const GPTConfig& config = loaded.model->config();
  const std::vector<int64_t> prompt = encode_prompt(*loaded.tokenizer, arguments.prompt);
  std::cerr << "sample: " << loaded.description << ": " << config.n_layer << " layers, " << config.n_embd
            << " channels, block " << config.block_size << ", vocabulary " << config.vocab_size << "; prompt "
            << prompt.size() << " tokens; " << (arguments.no_cache ? "no KV cache" : "KV cache") << "\n";

  arguments.generation.max_new_tokens = arguments.tokens;
  arguments.generation.use_cache = !arguments.no_cache;
  tokenizer::StreamingDecoder decoder(*loaded.tokenizer);
  std::cout << arguments.prompt << std::flush;
  generate(
      *loaded.model, prompt, arguments.generation, [&](int64_t id) { std::cout << decoder.push(id) << std::flush; },
      [](const std::string& note) { std::cerr << "\nsample: note: " << note << "\n"; });
  std::cout << decoder.finish();
  if (isatty(STDOUT_FILENO) == 1) std::cout << "\n";  // leave the shell prompt on its own line
  std::cout << std::flush;
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto arguments = std::make_shared<SampleArguments>();
  SamplingOptions& sampling = arguments->generation.sampling;
  CLI::App* command = app.add_subcommand("sample", "Continue a prompt with a trained checkpoint or GPT-2 weights");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  command->add_option("--prompt", arguments->prompt, "Text to continue (default: a newline)");
  command->add_option("--tokens", arguments->tokens, "Tokens to generate")->capture_default_str()->check(positive_integer());
  command->add_option("--temperature", sampling.temperature, "Divide the logits by this (> 0)")
      ->capture_default_str()
      ->check(positive_number());
  command->add_option("--top-k", sampling.top_k, "Sample among the K most likely tokens only (0 = all)")
      ->capture_default_str()
      ->check(non_negative_integer());
  command->add_option("--top-p", sampling.top_p, "Sample from the smallest set of tokens with this much probability")
      ->capture_default_str()
      ->check(fraction_up_to_one());
  command->add_option("--repetition-penalty", sampling.repetition_penalty,
                      "Make tokens already in the text less likely (> 1) or more likely (< 1)")
      ->capture_default_str()
      ->check(positive_number());
  command->add_option("--seed", arguments->generation.seed, "Seed of the sampling")->capture_default_str();
  command->add_flag("--greedy", sampling.greedy, "Always take the most likely token");
  command->add_flag("--no-cache", arguments->no_cache, "Re-run the whole window for every token (no KV cache)");
  command->add_option("--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] { run_sample(*command, *arguments); });
}

}  // namespace tg::cli
