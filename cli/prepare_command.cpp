// tinygpt prepare: tokenise text files once into a dataset that is read from
// disk for training (datasets/prepare_tokens.h writes it, datasets/token_dataset.h reads it).
//
//   tinygpt prepare --data a.txt b.txt --tokenizer gpt2 --out data/mine
//   tinygpt prepare --chat chats.jsonl --tokenizer char --out data/chats   (conversations for chat SFT)
//
// writes data/mine/train.bin and val.bin (the ids, uint16 or uint32), meta.json
// and, for a BPE tokenizer, a copy of its encoder.json and vocab.bpe (of a Hugging
// Face tokenizer, its tokenizer.json and tokenizer_config.json). A source may
// be a stream, `--data <(zcat corpus.gz)` or `--data -` (standard input): it is
// copied into --out first (datasets/spooled_stream.h). --chat FILE.jsonl renders
// conversations with the tokenizer's chat template and writes, beside the ids,
// where each conversation starts and which ids are the assistant's
// (datasets/conversation_dataset.h); `train --data DIR` trains on them as on
// the .jsonl itself.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/data_paths.h"
#include "cli/flag_checks.h"
#include "cli/usage_errors.h"
#include "tinygpt/datasets/conversation_dataset.h"
#include "tinygpt/datasets/prepare_tokens.h"
#include "tinygpt/datasets/token_dataset_meta.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"

namespace tg::cli {

namespace {

struct PrepareArguments {
  std::vector<std::string> data;
  std::string chat;  // a conversation file instead of texts
  std::string tokenizer;
  std::string vocab;
  std::string out;
  double val_fraction = 0.1;
  int threads = 0;
  std::size_t chunk_bytes = PrepareOptions{}.piece_bytes;
};

// --tokenizer char | gpt2 | DIR (with --vocab only for gpt2), as PrepareOptions says it. A DIR
// holding a tokenizer.json is a Hugging Face tokenizer, else it must hold a GPT-2-style BPE.
void choose_tokenizer(const PrepareArguments& arguments, PrepareOptions& options) {
  check_usage(arguments.vocab.empty() || arguments.tokenizer == "gpt2",
              "--vocab is GPT-2's vocabulary, for --tokenizer gpt2 only (a BPE directory is given as --tokenizer DIR)");
  if (arguments.tokenizer == "char") {
    options.tokenizer = DatasetTokenizer::char_level;
  } else if (arguments.tokenizer == "gpt2") {
    options.tokenizer = DatasetTokenizer::gpt2;
    options.vocabulary_directory = arguments.vocab.empty() ? default_gpt2_vocab_dir("prepare") : arguments.vocab;
  } else if (tokenizer::has_hf_tokenizer(arguments.tokenizer)) {
    options.tokenizer = DatasetTokenizer::hf;
    options.vocabulary_directory = arguments.tokenizer;
  } else {
    check_usage(tokenizer::has_gpt2_vocabulary(arguments.tokenizer), "--tokenizer must be char, gpt2 or a directory "
                "holding encoder.json and vocab.bpe (the output of tinygpt bpe-train) or a Hugging Face "
                "tokenizer.json, got ", arguments.tokenizer);
    options.tokenizer = DatasetTokenizer::bpe;
    options.vocabulary_directory = arguments.tokenizer;
  }
}

std::string plural(int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

void print_summary(const PrepareSummary& summary, const std::string& out) {
  const TokenDatasetMeta& meta = summary.meta;
  const double megabytes = static_cast<double>(summary.source_bytes) / 1e6;
  char line[300];
  std::snprintf(line, sizeof line, "prepare: %s, %.2f MB in %.2f s (%.1f MB/s); %s tokenizer, vocabulary of %lld, %s",
                plural(static_cast<int64_t>(meta.sources.size()), "file").c_str(), megabytes, summary.seconds,
                summary.seconds > 0 ? megabytes / summary.seconds : 0.0, meta.tokenizer.type.c_str(),
                static_cast<long long>(meta.vocab_size), token_dtype_name(meta.dtype));
  std::cerr << line << "\n"
            << "prepare: train " << meta.train.tokens << " tokens, val " << meta.val.tokens << " tokens; written to "
            << out << " (" << meta.train.file << ", " << meta.val.file << ", " << kTokenDatasetMetaFile << ")\n";
}

// --chat FILE.jsonl: a dataset of conversations.
void prepare_conversations(const PrepareArguments& arguments, const PrepareOptions& chosen) {
  for (const char* written : {"train.bin", "val.bin", kTokenDatasetMetaFile, kTrainStartsFile, kTrainMaskFile,
                              kValStartsFile, kValMaskFile})
    check_output_is_no_input("--out", std::filesystem::path(arguments.out) / written, {{"--chat", arguments.chat}});
  PrepareConversationsOptions options;
  options.source = arguments.chat;
  options.tokenizer = chosen.tokenizer;
  options.vocabulary_directory = chosen.vocabulary_directory;
  options.out_directory = arguments.out;
  options.val_fraction = arguments.val_fraction;
  options.progress = &std::cerr;
  print_summary(prepare_conversation_dataset(options), arguments.out);
}

void run_prepare(const PrepareArguments& arguments) {
  if (arguments.threads > 0) set_num_threads(arguments.threads);
  check_usage(arguments.data.empty() != arguments.chat.empty(),
              "give --data (text files) or --chat (a file of conversations), one of them");
  if (!arguments.chat.empty()) {
    PrepareOptions chosen;
    choose_tokenizer(arguments, chosen);
    return prepare_conversations(arguments, chosen);
  }
  std::vector<std::pair<std::string, std::filesystem::path>> sources;
  for (const std::string& source : arguments.data) sources.push_back({"--data", source});
  for (const char* written : {"train.bin", "val.bin", kTokenDatasetMetaFile, "encoder.json", "vocab.bpe",
                              "tokenizer.json", "tokenizer_config.json"})
    check_output_is_no_input("--out", std::filesystem::path(arguments.out) / written, sources);
  PrepareOptions options;
  choose_tokenizer(arguments, options);
  options.sources = arguments.data;
  options.out_directory = arguments.out;
  options.val_fraction = arguments.val_fraction;
  options.piece_bytes = arguments.chunk_bytes;
  options.progress = &std::cerr;
  options.progress_is_terminal = isatty(STDERR_FILENO) == 1;
  print_summary(prepare_token_dataset(options), arguments.out);
}

}  // namespace

void add_prepare_command(CLI::App& app) {
  auto arguments = std::make_shared<PrepareArguments>();
  CLI::App* command = app.add_subcommand("prepare", "Tokenise text files once into a dataset for training");
  command->footer(
      "Writes into --out DIR: train.bin and val.bin, the token ids (little-endian uint16, or uint32 for a "
      "vocabulary of more than 65,535), split by position (the last --val-fraction is val); meta.json (the "
      "tokenizer, vocabulary size, dtype, token counts and each file's XXH3 hash), written last; and for a BPE "
      "tokenizer a copy of its encoder.json and vocab.bpe (of a Hugging Face tokenizer, its tokenizer.json and "
      "tokenizer_config.json), so that the dataset stands alone. A pipe, such as "
      "<(zcat corpus.gz), or - for standard input is copied into DIR first (at most half its free space) and "
      "removed at the end.");
  command->add_option("--data", arguments->data, "Text files or pipes (- for standard input), one document each; "
                                                 "with a BPE tokenizer <|endoftext|> goes between them (with a "
                                                 "tokenizer.json, its eos token)")
      ->type_name("FILE")
      ->expected(1, -1);
  command->add_option("--chat", arguments->chat,
                      "A file of conversations, one JSON object a line ({\"messages\": [{\"role\", \"content\"}, ...]}), "
                      "rendered with the tokenizer's chat template (ChatML for char and GPT-2's) for chat SFT: the "
                      "loss on the assistant's tokens only")
      ->type_name("FILE.jsonl");
  command->add_option("--tokenizer", arguments->tokenizer,
                      "char (the corpus's characters), gpt2 (GPT-2's vocabulary, see --vocab), a directory "
                      "from tinygpt bpe-train, or a directory holding a Hugging Face tokenizer.json (Llama, Qwen, "
                      "SmolLM2: each file is then encoded whole)")
      ->required()
      ->type_name("char|gpt2|DIR");
  command->add_option("--vocab", arguments->vocab,
                      "GPT-2's encoder.json and vocab.bpe for --tokenizer gpt2 (default: $TINYGPT_DATA_DIR/gpt2, "
                      "else ../shared/data/gpt2 beside the checkout)")
      ->type_name("DIR");
  command->add_option("--out", arguments->out, "Directory to write the dataset into (created if needed)")
      ->required()
      ->type_name("DIR");
  command->add_option("--val-fraction", arguments->val_fraction,
                      "The last part of the tokens, by position, kept for validation (with --chat: of the "
                      "conversations, at least one)")
      ->capture_default_str()
      ->check(fraction_below_one());
  command->add_option("--threads", arguments->threads, "Threads that encode (default: all)")->check(positive_integer());
  // Not hidden: CLI11 leaves a hidden flag's name out of its error messages.
  command->add_option("--chunk-bytes", arguments->chunk_bytes,
                      "Bytes of text per piece as the files are streamed (memory is a few pieces per thread); "
                      "the ids do not depend on it")
      ->capture_default_str()
      ->type_name("N")
      ->check(positive_integer());
  command->callback([arguments] { run_prepare(*arguments); });
}

}  // namespace tg::cli
