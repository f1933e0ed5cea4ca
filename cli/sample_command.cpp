// tinygpt sample: continues a prompt with a trained checkpoint or GPT-2 weights.
//
//   tinygpt sample --ckpt out/shakespeare --prompt "ROMEO:" --tokens 300 --temperature 0.8 --top-k 40
//   tinygpt sample --weights gpt2/ --prompt "The meaning of life is" --tokens 50 --top-p 0.9
//   tinygpt sample -m out/shakespeare -p "ROMEO:" -n 100 -s 7 --temperature 0   (llama.cpp's short flags; 0 = greedy)
//   tinygpt sample --weights SmolLM2-135M-Instruct/ --chat -p "What is a GPT?"   (one chat turn: the reply only)
//
// Without --seed every call draws a new seed and prints it on stderr, so a sample
// can be made again.
//
// stdout gets the prompt and its continuation, streamed as the tokens come, and
// nothing else (so it can be piped); what was loaded and any notes go to stderr.
#include <unistd.h>

#include <iostream>
#include <optional>
#include <sstream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "tinygpt/datasets/chat_format.h"
#include "cli/model_source.h"
#include "cli/sampling_flags.h"
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
  bool chat = false;
  std::string system;
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
    return tokenizer.encode(prompt, /*add_special_tokens=*/true);  // as a Hugging Face tokenizer(prompt): Llama's BOS first
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
  settle_sampling_options(command, arguments.generation.sampling, arguments.generation.seed);  // before anything is printed
  check_usage(arguments.chat || !command.count("--system"), "--system is for --chat");
  std::string text = prompt_text(command, arguments);
  const LoadedModel loaded = load_model(arguments.source, "sample");
  const GPTConfig& config = loaded.model->config();
  std::vector<int64_t> prompt;
  arguments.generation.stop_ids = loaded.stop_ids;  // a GPT-2 document ends at <|endoftext|>, a model's text at its eos
  if (arguments.chat) {  // the prompt is one user message, rendered with the model's chat template
    check(!text.empty(), "sample: the message is empty; give at least one character");
    const ChatFormat format = chat_format_for(*loaded.tokenizer, loaded.stop_ids);
    nlohmann::ordered_json messages = nlohmann::ordered_json::array();
    if (!arguments.system.empty()) messages.push_back({{"role", "system"}, {"content", arguments.system}});
    messages.push_back({{"role", "user"}, {"content", text}});
    prompt = render_conversation(format, *loaded.tokenizer, messages, "sample").ids;
    arguments.generation.stop_ids = format.stop_ids;
    text.clear();  // only the reply is printed
  } else {
    prompt = encode_prompt(*loaded.tokenizer, text);
  }
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
  command->add_flag("--chat", arguments->chat,
                    "The prompt is a user's message: render it with the model's chat template, print the reply");
  command->add_option("--system", arguments->system, "With --chat: a system message before it");
  command->add_option("--num-samples", arguments->samples, "Samples to write, the seed + 1 for each next one")
      ->capture_default_str()
      ->check(integer_in(1, 1000));
  add_sampling_options(*command, sampling, arguments->generation.seed);
  command->add_flag("--no-cache", arguments->no_cache, "Re-run the whole window for every token (no KV cache)");
  command->add_option("-t,--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] { run_sample(*command, *arguments); });
}

}  // namespace tg::cli
