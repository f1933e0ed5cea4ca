// A prepared dataset, as `tinygpt prepare` writes it into a directory:
//
//   meta.json    what the files hold (datasets/token_dataset_meta.h)
//   train.bin    the first 90% (by default) of the corpus's token ids
//   val.bin      the rest: text the model never trains on
//   encoder.json, vocab.bpe   for a BPE tokenizer, a copy of its vocabulary
//
// Opening one checks it whole before training starts: every field of
// meta.json, the tokenizer against vocab_size, each token file's size against
// its dtype and its token count, and (by default) each file's hash. The files
// are mapped, not read (datasets/token_file.h), so a dataset may be larger than memory.
//
// Every failure is a tg::Error naming the file at fault.
#pragma once

#include <cstdint>
#include <string>

#include "tinygpt/datasets/token_dataset_meta.h"
#include "tinygpt/datasets/token_file.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

// Whether open_prepared_dataset reads both token files through to check their
// hashes. It does by default: it costs one sequential read of the files (about
// a second per GB from disk, less from the page cache), small beside a
// training run, and it is the only check that catches a file damaged in the
// middle. `skip` is for tools that open a dataset they have just checked.
enum class HashCheck { verify, skip };

struct PreparedDataset {
  std::string directory;
  TokenDatasetMeta meta;
  TokenFile train;
  TokenFile val;
  tokenizer::TextTokenizer tokenizer;  // char-level from the characters, or BPE from the copied files
};

// Throws tg::Error: "not a prepared dataset" when the directory has no
// meta.json, a field of meta.json that is missing or wrong, a tokenizer that
// does not match vocab_size, a token file that is missing, not a whole number of
// ids, or holds another count of tokens than meta.json says, a hash mismatch.
PreparedDataset open_prepared_dataset(const std::string& directory, HashCheck hashes = HashCheck::verify);

// Reads `path` (in blocks, not mapped, so the check does not fill memory) and
// throws tg::Error naming it when its XXH3-64 is not `expected_xxh3`.
void verify_token_file_hash(const std::string& path, uint64_t expected_xxh3);

}  // namespace tg
