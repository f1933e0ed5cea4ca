// tinygpt sample: continues a prompt with a trained checkpoint or GPT-2 weights.
//
//   tinygpt sample --ckpt out/shakespeare --prompt "ROMEO:" --tokens 300 --temperature 0.8 --top-k 40
//   tinygpt sample --weights gpt2/ --prompt "The meaning of life is" --tokens 50 --top-p 0.9
//   tinygpt sample -m out/shakespeare -p "ROMEO:" -n 100 -s 7 --temperature 0   (llama.cpp's short flags; 0 = greedy)
//
// Without --seed every call draws a new seed and prints it on stderr, so a sample
// can be made again.
//
// stdout gets the prompt and its continuation, streamed as the tokens come, and
// nothing else (so it can be piped); what was loaded and any notes go to stderr.
#include <unistd.h>

#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/model_source.h"
#include "cli/usage_errors.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::cli {

namespace {

// More than a context length many times over: a bound that catches a typo
// (--tokens 2000000000) before it runs for days.
constexpr int64_t kMaxTokens = 1'000'000;

struct SampleArguments {
  ModelSourceArguments source;
  std::string prompt = "\n";
  std::string prompt_file;
  std::string stop;
  int64_t tokens = 200;
  int64_t samples = 1;
  int threads = 0;
  bool no_cache = false;
  GenerationOptions generation;
};

// --prompt TEXT, --prompt - (standard input) or --prompt-file FILE.
std::string prompt_text(const CLI::App& command, const SampleArguments& arguments) {
  check(!(command.count("--prompt") && command.count("--prompt-file")),
        "sample: give --prompt TEXT or --prompt-file FILE, not both");
  if (command.count("--prompt-file")) return read_text_file(arguments.prompt_file);
  if (arguments.prompt != "-") return arguments.prompt;
  std::ostringstream text;
  text << std::cin.rdbuf();
  return text.str();
}

std::vector<int64_t> encode_prompt(const tokenizer::TextTokenizer& tokenizer, const std::string& prompt) {
  check(!prompt.empty(), "sample: the prompt is empty; give at least one character");
  try {
    return tokenizer.encode(prompt);
  } catch (const tokenizer::TokenizerError& error) {
    fail("sample: the prompt: ", error.what());
  }
}

// Writes one sample to stdout as it comes: the prompt, then each token's text,
// until --stop's text appears (printed up to and including it).
void write_sample(GPT& model, const tokenizer::TextTokenizer& tokenizer, const std::string& prompt_text,
                  const std::vector<int64_t>& prompt, const GenerationOptions& options, const std::string& stop) {
  tokenizer::StreamingDecoder decoder(tokenizer);
  std::cout << prompt_text << std::flush;
  std::string generated;  // the text so far, searched for --stop
  generate(model, prompt, options, [&](int64_t id) {
    std::string piece = decoder.push(id);
    if (stop.empty()) {
      std::cout << piece << std::flush;
      return true;
    }
    const size_t searched_from = generated.size() >= stop.size() ? generated.size() - stop.size() + 1 : 0;
    generated += piece;
    const size_t found = generated.find(stop, searched_from);
    if (found != std::string::npos) piece.resize(piece.size() - (generated.size() - found - stop.size()));
    std::cout << piece << std::flush;
    return found == std::string::npos;
  });
  std::cout << decoder.finish();
}

void run_sample(const CLI::App& command, SampleArguments arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  check_usage(!command.count("--stop") || !arguments.stop.empty(), "--stop needs a text to stop at; \"\" matches "
              "nowhere");
  // --temperature 0 is greedy, as in llama.cpp and the OpenAI API.
  if (arguments.generation.sampling.temperature == 0) {
    arguments.generation.sampling.greedy = true;
    arguments.generation.sampling.temperature = 1;
  }
  arguments.generation.sampling.validate();  // before anything is printed
  const std::string text = prompt_text(command, arguments);
  const LoadedModel loaded = load_model(arguments.source, "sample");
  const GPTConfig& config = loaded.model->config();
  const std::vector<int64_t> prompt = encode_prompt(*loaded.tokenizer, text);
  std::cerr << "sample: " << loaded.description << ": " << config.n_layer << " layers, " << config.n_embd
            << " channels, block " << config.block_size << ", vocabulary " << config.vocab_size << "; prompt "
            << prompt.size() << " tokens; " << (arguments.no_cache ? "no KV cache" : "KV cache");
  if (!arguments.generation.sampling.greedy)
    std::cerr << "; seed " << arguments.generation.seed
              << (command.count("--seed") ? "" : " (drawn at random: --seed repeats it)");
  std::cerr << "\n";
  // Said before the text, not in the middle of it.
  const int64_t longest = static_cast<int64_t>(prompt.size()) + arguments.tokens;
  if (longest > config.block_size) {
    std::cerr << "sample: note: the prompt and --tokens " << arguments.tokens << " make up to " << longest
              << " tokens, more than the context length of " << config.block_size
              << ": past it the model sees the last " << config.block_size << " tokens"
              << (arguments.no_cache ? "" : ", re-reading them for every new token") << "\n";
  }

  arguments.generation.max_new_tokens = arguments.tokens;
  arguments.generation.sampling.vocabulary_size = loaded.tokenizer->vocab_size();
  arguments.generation.use_cache = !arguments.no_cache;
  arguments.generation.stop_ids = loaded.stop_ids;  // a GPT-2 document ends at <|endoftext|>, a chat model's turn at its eos
  for (int64_t sample = 0; sample < arguments.samples; ++sample) {
    if (sample > 0) std::cout << "\n---------------\n";  // nanoGPT's separator between samples
    GenerationOptions options = arguments.generation;
    options.seed += static_cast<uint64_t>(sample);
    write_sample(*loaded.model, *loaded.tokenizer, text, prompt, options, arguments.stop);
  }
  if (isatty(STDOUT_FILENO) == 1) std::cout << "\n";  // leave the shell prompt on its own line
  std::cout << std::flush;
}

}  // namespace

void add_sample_command(CLI::App& app) {
  auto arguments = std::make_shared<SampleArguments>();
  SamplingOptions& sampling = arguments->generation.sampling;
  CLI::App* command = app.add_subcommand("sample", "Continue a prompt with a trained checkpoint or GPT-2 weights");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  command->add_option("-p,--prompt", arguments->prompt, "Text to continue (default: a newline; - reads standard input)");
  command->add_option("--prompt-file", arguments->prompt_file, "Continue the text of this file");
  command->add_option("-n,--tokens", arguments->tokens, "Tokens to generate at most (GPT-2 models stop at <|endoftext|>)")
      ->capture_default_str()
      ->check(integer_in(1, kMaxTokens));
  command->add_option("--stop", arguments->stop, "End a sample when its text contains this");
  command->add_option("--num-samples", arguments->samples, "Samples to write, the seed + 1 for each next one")
      ->capture_default_str()
      ->check(integer_in(1, 1000));
  command->add_option("--temperature", sampling.temperature, "Divide the logits by this (0: greedy)")
      ->capture_default_str()
      ->check(non_negative_number());
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
  command->add_option("-s,--seed", arguments->generation.seed, "Seed of the sampling (default: drawn at random)");
  command->add_flag("--greedy", sampling.greedy, "Always take the most likely token");
  command->add_flag("--no-cache", arguments->no_cache, "Re-run the whole window for every token (no KV cache)");
  command->add_option("-t,--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] {
    if (!command->count("--seed")) arguments->generation.seed = std::random_device{}();
    run_sample(*command, *arguments);
  });
}

}  // namespace tg::cli
