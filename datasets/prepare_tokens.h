// `tinygpt prepare`: text files in, a prepared dataset out (the files of
// datasets/token_dataset.h: train.bin, val.bin, meta.json and the tokenizer's files).
//
// The corpus is streamed: each file is read in pieces that end where the
// tokenizer allows a cut (tokenizer/safe_cuts.h), a round of pieces is encoded
// on all OpenMP threads, and the ids are written in order. Memory holds a few
// pieces per thread, whatever the size of the corpus. A char-level vocabulary
// is every character of the corpus, so char-level takes two passes
// (characters, then ids); BPE takes one.
//
// Each file is one document. With a BPE tokenizer "<|endoftext|>" goes between
// documents, as in nanoGPT (with a Hugging Face tokenizer.json, its eos token);
// char-level just concatenates them. A Hugging Face tokenizer has no proven
// safe cut (its regexes and normalizers vary), so each of its documents is
// encoded whole, one document per thread: memory holds the largest file. An
// "<|endoftext|>" written inside a file is that token too (corpora such as
// TinyStories separate their documents so), exactly as `train --data FILE
// --tokenizer gpt2` encodes a text in memory (TextTokenizer::encode).
//
// The split is by position, where split_by_position (datasets/data.h) puts it:
// of N tokens, the first floor(N x (1 - val_fraction)) are train, the rest val.
// So a char-level dataset of one file holds exactly the ids `train --data FILE` uses.
//
// A stream (a pipe such as <(zcat corpus.gz), a named pipe, or "-" for standard
// input) cannot be read twice: it is copied once into the output directory and
// read from there like a file (datasets/spooled_stream.h); meta.json records it
// by the name it was given, as a stream, with the hash of its bytes. The copies
// may take at most half the space free there when prepare starts. A device
// (/dev/zero) or a socket is refused.
//
// The files are written under temporary names and renamed at the end, meta.json
// last (and an old meta.json is removed before anything is renamed), so an
// interrupted prepare never leaves a directory that looks like a whole dataset.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "tinygpt/datasets/token_dataset_meta.h"

namespace tg {

enum class DatasetTokenizer {
  char_level,  // the characters of the corpus
  gpt2,        // GPT-2's vocabulary
  bpe,         // a vocabulary from `tinygpt bpe-train`
  hf,          // a Hugging Face tokenizer.json (Llama, Qwen, SmolLM2...)
};

struct PrepareOptions {
  std::vector<std::string> sources;   // text files or streams ("-": standard input), one document each, in order
  DatasetTokenizer tokenizer = DatasetTokenizer::char_level;
  std::string vocabulary_directory;   // gpt2, bpe: encoder.json + vocab.bpe (or vocab.json + merges.txt);
                                      // hf: tokenizer.json (+ tokenizer_config.json)
  std::string out_directory;          // created if needed
  double val_fraction = 0.1;          // in [0, 1)
  std::size_t piece_bytes = std::size_t{1} << 18;  // the streaming piece size; the ids do not depend on it
  std::ostream* progress = nullptr;   // progress lines (stderr in the CLI), or none
  bool progress_is_terminal = false;  // rewrite one progress line in place
  uint64_t stream_limit_bytes = 0;    // the most all streams may copy; 0: half the space free in out_directory
};

struct PrepareSummary {
  TokenDatasetMeta meta;  // as written to meta.json
  int64_t source_bytes = 0;
  double seconds = 0;
};

// Throws tg::Error naming the file at fault: a source that is missing, a
// directory, a device, changes while it is read, or a stream past the limit; text a char-level vocabulary cannot
// hold (invalid UTF-8); a vocabulary directory without its files.
PrepareSummary prepare_token_dataset(const PrepareOptions& options);

}  // namespace tg
