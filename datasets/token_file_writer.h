// Writing the two token files of a prepared dataset when the number of tokens
// is known only at the end: the split is by position (the first part train,
// the rest val), so every id goes into train.bin first; at the end the tail is
// moved into val.bin and train.bin is cut short.
//
//   SplitTokenWriter writer(directory, TokenDType::uint16, "prepare");
//   writer.append(ids);  ...                      // as the corpus is encoded
//   writer.split(train_tokens);                   // both files complete, hashed
//   writer.commit();                              // renamed into place
//
// Until commit() the files have temporary names (tensor/io/atomic_file.h), so a
// run that is interrupted leaves no train.bin or val.bin that looks finished.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "tinygpt/datasets/token_dataset_meta.h"
#include "tinygpt/datasets/token_file.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tokenizer/token_id.h"

namespace tg {

inline constexpr const char* kTrainTokensFile = "train.bin";
inline constexpr const char* kValTokensFile = "val.bin";

class SplitTokenWriter {
 public:
  // `who` starts error messages.
  SplitTokenWriter(const std::string& directory, TokenDType dtype, const std::string& who);

  // Appends ids, little-endian, each as the dtype. Throws tg::Error for an id
  // the dtype cannot hold.
  void append(std::span<const tokenizer::TokenId> ids);
  int64_t tokens() const { return tokens_; }

  // Moves ids [train_tokens, tokens()) into val.bin and keeps the rest in
  // train.bin; hashes both. Call once, after the last append.
  void split(int64_t train_tokens);
  // Renames train.bin, then val.bin, into place.
  void commit();

  // After split(): the two files as meta.json describes them.
  const TokenSplitMeta& train() const { return train_; }
  const TokenSplitMeta& val() const { return val_; }

 private:
  std::string who_;
  TokenDType dtype_;
  AtomicFile train_file_;
  AtomicFile val_file_;
  int64_t tokens_ = 0;
  std::vector<uint16_t> narrow_ids_;  // the ids of one append, as a uint16 file stores them
  TokenSplitMeta train_{kTrainTokensFile};
  TokenSplitMeta val_{kValTokensFile};
};

}  // namespace tg
