// tinygpt eval: how well a model predicts a text, as loss and perplexity.
//
//   tinygpt eval --weights gpt2/ --data wiki.txt --block-size 1024 --max-tokens 50000
//   tinygpt eval --ckpt runs/shakespeare-char --data ../shared/data/tinyshakespeare.txt
//   tinygpt eval --weights gpt2/ --ids "464 3616 286 1204 318"
//   tinygpt eval --ckpt runs/shakespeare-int8 --data ... --cached   (through the KV cache, as generation)
//   tinygpt eval --ckpt runs/tinybot --data val.jsonl   (conversations: the loss on the assistant's tokens)
//
// stdout gets exactly one line, `loss <value> perplexity <value>`, each value the
// shortest decimal that reads back as the same double; what was loaded and the
// progress go to stderr. The windows are described in models/evaluate.h. A .jsonl
// file holds conversations (datasets/conversation_file.h), rendered with the
// model's chat template and scored whole on the assistant's tokens only
// (models/assistant_loss.h); the line then ends with `assistant_tokens <count>`.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/model_source.h"
#include "cli/token_ids.h"
#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/models/assistant_loss.h"
#include "tinygpt/models/evaluate.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::cli {

namespace {

struct EvalArguments {
  ModelSourceArguments source;
  std::string data;
  std::string ids;
  int64_t block_size = 0;  // 0: the model's
  int64_t max_tokens = 0;  // 0: all
  std::string split = "all";
  bool cached = false;
  int threads = 0;
};

// The part of the ids --split names, split by position as training splits a
// corpus (datasets/data.h), and how to say which part it is.
std::pair<std::vector<int64_t>, std::string> ids_of_split(std::vector<int64_t> ids, const std::string& split) {
  if (split == "all") return {std::move(ids), "all of it"};
  const TokenSplits splits = split_by_position(ids);
  const int64_t train = splits.train.size();
  if (split == "train")
    return {splits.train.ids(0, train), "the train split, tokens 0 to " + std::to_string(train) + " (the first 90%)"};
  return {splits.val.ids(0, splits.val.size()), "the val split, tokens " + std::to_string(train) + " to " + std::to_string(ids.size()) +
                                " (the last 10%, as training holds it out)"};
}

std::vector<int64_t> encode_file(const tokenizer::TextTokenizer& tokenizer, const std::string& path) {
  const std::string text = read_text_file(path);
  try {
    return tokenizer.encode(text);
  } catch (const tokenizer::TokenizerError& error) {
    fail("eval: --data ", path, ": ", error.what());
  }
}

std::string shortest(double value) {
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

constexpr int64_t kConversationsPerBatch = 8;

// --data FILE.jsonl: every conversation once, the loss over the assistant's tokens.
void eval_conversations(const CLI::App& command, const EvalArguments& arguments, const LoadedModel& loaded,
                        int64_t block_size) {
  for (const char* flag : {"--split", "--max-tokens", "--cached"})
    check(!command.count(flag), "eval: ", flag, " is for a text; the conversations of --data ", arguments.data,
          " are scored whole, each once");
  check(block_size <= loaded.model->config().block_size, "eval: --block-size ", block_size,
        " is longer than the model's context of ", loaded.model->config().block_size);
  const std::string where = "eval: --data " + arguments.data;
  const ChatFormat format = chat_format_for(*loaded.tokenizer, loaded.stop_ids);
  const ConversationSplit conversations =
      conversation_split(read_conversations(arguments.data, where), format, *loaded.tokenizer, "eval", where);
  const ConversationFit fit = conversations.fit(block_size);
  check(fit.usable > 0, where, ": no conversation has an assistant token within the block size ", block_size);
  std::cerr << "eval: " << loaded.description << "\neval: " << arguments.data << ": " << conversations.size()
            << " conversations (template: " << format.template_source << "); scoring " << fit.assistant_targets
            << " assistant tokens in contexts of up to " << block_size;
  if (fit.cut > 0) std::cerr << "; " << fit.cut << " longer conversations cut to it";
  if (fit.left_out > 0) std::cerr << "; " << fit.left_out << " with no assistant token within it left out";
  std::cerr << "\n";
  const bool show_progress = isatty(STDERR_FILENO) == 1;
  const AssistantLoss loss = evaluate_conversations(
      *loaded.model, conversations, conversations.usable(block_size), kConversationsPerBatch, block_size,
      [&](int64_t done, int64_t all) {
        if (show_progress)
          std::fprintf(stderr, "\reval: batch %lld / %lld", static_cast<long long>(done), static_cast<long long>(all));
      });
  if (show_progress) std::fprintf(stderr, "\n");
  check(std::isfinite(loss.mean()), "eval: the loss is ", loss.mean(), ": the model's weights are not finite numbers "
        "(a diverged or damaged checkpoint)");
  std::cout << "loss " << shortest(loss.mean()) << " perplexity " << shortest(std::exp(loss.mean()))
            << " assistant_tokens " << loss.tokens << "\n";
}

void run_eval(const CLI::App& command, const EvalArguments& arguments) {
  if (command.count("--threads")) set_num_threads(arguments.threads);
  check(!command.count("--ids") || !arguments.ids.empty(), "eval: --ids is empty; give the ids to score, at least "
        "two (\"ID ID ...\")");
  check(arguments.data.empty() != arguments.ids.empty(), "eval: give one of --data FILE or --ids \"ID ID ...\"");
  ModelSourceArguments source = arguments.source;
  source.keep_lora_apart = true;  // the adapters computed apart, as training and PEFT compute them
  const LoadedModel loaded = load_model(source, "eval");
  const int64_t block_size = arguments.block_size > 0 ? arguments.block_size : loaded.model->config().block_size;
  if (arguments.data.ends_with(".jsonl")) return eval_conversations(command, arguments, loaded, block_size);

  std::vector<int64_t> all_ids = arguments.ids.empty() ? encode_file(*loaded.tokenizer, arguments.data)
                                                        : parse_token_ids(arguments.ids, "eval: --ids");
  const size_t total = all_ids.size();
  auto [ids, part] = ids_of_split(std::move(all_ids), arguments.split);
  if (arguments.max_tokens > 0 && ids.size() > static_cast<size_t>(arguments.max_tokens)) ids.resize(arguments.max_tokens);
  check_evaluation_input(*loaded.model, ids, block_size);
  std::cerr << "eval: " << loaded.description << "\neval: " << (arguments.ids.empty() ? arguments.data : "--ids")
            << ": " << total << " tokens; scoring " << part << ": " << ids.size() << " tokens in windows of "
            << block_size << "\n";

  const auto start = std::chrono::steady_clock::now();
  const bool show_progress = isatty(STDERR_FILENO) == 1;  // a log file gets the summary only
  const EvaluationPath path = arguments.cached ? EvaluationPath::Cached : EvaluationPath::Forward;
  const EvaluationResult result = evaluate(*loaded.model, ids, block_size, [&](int64_t done, int64_t all) {
    if (!show_progress) return;
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::fprintf(stderr, "\reval: %lld / %lld tokens (%.0f tokens/s)", static_cast<long long>(done),
                 static_cast<long long>(all), static_cast<double>(done) / std::max(seconds, 1e-9));
  }, path);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::fprintf(stderr, "%seval: %lld tokens predicted in %lld windows, %.1f s (%.0f tokens/s)\n", show_progress ? "\n" : "",
               static_cast<long long>(result.predicted_tokens), static_cast<long long>(result.windows), seconds,
               static_cast<double>(result.predicted_tokens) / std::max(seconds, 1e-9));
  // NaN or infinite weights give a NaN loss: not a score (sample refuses such a model too).
  check(std::isfinite(result.loss), "eval: the loss is ", result.loss, ": the model's weights are not finite numbers "
        "(a diverged or damaged checkpoint)");
  std::cout << "loss " << shortest(result.loss) << " perplexity " << shortest(result.perplexity) << "\n";
}

}  // namespace

void add_eval_command(CLI::App& app) {
  auto arguments = std::make_shared<EvalArguments>();
  CLI::App* command = app.add_subcommand("eval", "Mean next-token loss and perplexity of a model on a text");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  command->add_option("--data", arguments->data,
                      "Text file to evaluate on, or FILE.jsonl of conversations (the loss on the assistant's tokens)");
  command->add_option("--ids", arguments->ids, "Token ids to evaluate instead, separated by spaces");
  command->add_option("--block-size", arguments->block_size, "Tokens per window (default: the model's context)")
      ->check(positive_integer());
  command->add_option("--max-tokens", arguments->max_tokens, "Evaluate only the first N tokens")
      ->check(positive_integer());
  command->add_flag("--cached", arguments->cached,
                   "Score one token at a time through the KV cache, as generation computes (slower; for int8 "
                   "weights it rounds the activations as decoding does)");
  command->add_option("--split", arguments->split,
                      "all, or the train or val part as training splits a corpus (the first 90% / the last 10%)")
      ->capture_default_str()
      ->check(CLI::IsMember({"all", "train", "val"}));
  command->add_option("--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] { run_eval(*command, *arguments); });
}

}  // namespace tg::cli
