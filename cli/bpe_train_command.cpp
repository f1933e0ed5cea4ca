// tinygpt bpe-train: learn a byte-level BPE vocabulary from a text file.
//
//   tinygpt bpe-train --data FILE --vocab-size N --out DIR
//
// writes DIR/encoder.json and DIR/vocab.bpe in GPT-2's format, so that
// `tinygpt tokenize --gpt2 DIR` uses the result. N counts the 256 byte tokens,
// the merges and <|endoftext|>: N = 1257 learns 1000 merges.
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "cli/usage_errors.h"
#include "cli/flag_checks.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/bpe_trainer.h"
#include "tinygpt/tokenizer/gpt2_files.h"

namespace tg::cli {

namespace {

struct BpeTrainOptions {
  std::string data_path;
  std::size_t vocab_size = 0;
  std::string out_directory;
  std::uint64_t min_pair_count = 2;
};

void run_bpe_train(const BpeTrainOptions& options) {
  check_usage(options.vocab_size > 257, "--vocab-size ", options.vocab_size, " leaves no room for a merge: the 256 "
              "byte tokens and <|endoftext|> take 257; give 258 or more");
  for (const char* written : {"encoder.json", "vocab.bpe"})
    check_output_is_no_input("--out", std::filesystem::path(options.out_directory) / written, {{"--data", options.data_path}});
  const std::string corpus = read_text_file(options.data_path);

  const auto start = std::chrono::steady_clock::now();
  const tokenizer::BpeVocabulary vocabulary =
      tokenizer::train_bpe(corpus, {.vocab_size = options.vocab_size, .min_pair_count = options.min_pair_count});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // A vocabulary of bytes alone is not one GPT-2's format can hold (vocab.bpe lists merges).
  check(!vocabulary.merges().empty(), "bpe-train: no merge learned from '", options.data_path, "' (", corpus.size(),
        corpus.size() == 1 ? " byte" : " bytes", "): no pair of neighbouring bytes occurs --min-count ", options.min_pair_count,
        " times; give a longer text; nothing was written");
  tokenizer::write_gpt2_vocabulary(vocabulary, options.out_directory);

  const std::size_t merges = vocabulary.merges().size();
  std::cerr << "bpe-train: " << merges << " merges from " << corpus.size() << " bytes in " << seconds << " s ("
            << static_cast<long long>(merges / (seconds > 0 ? seconds : 1e-9)) << " merges/s); vocabulary of "
            << vocabulary.size() << " tokens written to " << options.out_directory << "\n";
  if (vocabulary.size() < options.vocab_size) {
    std::cerr << "bpe-train: stopped early: no pair occurs " << options.min_pair_count
              << " times or more, so the vocabulary is smaller than --vocab-size " << options.vocab_size << "\n";
  }
}

}  // namespace

void add_bpe_train_command(CLI::App& app) {
  auto options = std::make_shared<BpeTrainOptions>();
  CLI::App* command = app.add_subcommand("bpe-train", "Train a byte-level BPE tokenizer (GPT-2 format) on a text file");
  command->add_option("--data", options->data_path, "The training text")->required()->type_name("FILE");
  command->add_option("--vocab-size", options->vocab_size, "Tokens in all: 256 bytes + merges + <|endoftext|>")
      ->required()
      ->type_name("N")
      ->check(integer_in(257, int64_t{1} << 24));
  command->add_option("--out", options->out_directory, "Folder to write encoder.json and vocab.bpe into")
      ->required()
      ->type_name("DIR");
  command->add_option("--min-count", options->min_pair_count, "Stop when the best pair occurs fewer times")
      ->capture_default_str()
      ->check(positive_integer());
  command->callback([options] { run_bpe_train(*options); });
}

}  // namespace tg::cli
