// Training data: a corpus of token ids, split by position into train and
// validation parts, and random batches of contiguous windows from either.
//
// A batch is B windows of T+1 consecutive ids, each starting at a uniformly
// random position: the first T ids are the inputs, the last T the targets
// (the same window shifted by one), so every position is a next-token example.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace tg {

// The whole content of a text file (as bytes). Throws naming the path when it
// cannot be read.
std::string read_text_file(const std::string& path);

struct Batch {
  Tensor inputs;   // (B, T) int64
  Tensor targets;  // (B, T) int64: inputs shifted left by one position
};

// Ids of one part of the corpus.
class TokenSplit {
 public:
  TokenSplit(std::string name, std::vector<int64_t> ids) : name_(std::move(name)), ids_(std::move(ids)) {}

  const std::string& name() const { return name_; }  // "train" or "val", named in errors
  int64_t size() const { return static_cast<int64_t>(ids_.size()); }
  const std::vector<int64_t>& ids() const { return ids_; }

  // B random windows of T+1 ids. Draws exactly B values from `generator`, so the
  // batches of a run depend only on the seed and how many batches came before
  // (which is what makes resuming a run reproducible).
  // Throws when the split is too short for one window of T+1 ids.
  Batch sample_batch(int64_t batch_size, int64_t block_size, Generator& generator) const;

 private:
  std::string name_;
  std::vector<int64_t> ids_;
};

struct TokenSplits {
  TokenSplit train;
  TokenSplit val;
};

// The first `train_fraction` of the ids (by position, not shuffled: the
// validation text is text the model never saw) and the rest.
TokenSplits split_by_position(const std::vector<int64_t>& ids, double train_fraction = 0.9);

}  // namespace tg
