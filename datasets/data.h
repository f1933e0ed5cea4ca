// Training data: a corpus of token ids, split by position into train and
// validation parts, and random batches of contiguous windows from either.
//
// A batch is B windows of T+1 consecutive ids, each starting at a uniformly
// random position: the first T ids are the inputs, the last T the targets
// (the same window shifted by one), so every position is a next-token example.
//
// The ids of a split live in a TokenSource: in memory (a text tokenised when
// the run starts, 4 bytes per id) or in a memory-mapped token file written by
// `tinygpt prepare` (datasets/token_dataset.h), of which a batch reads only its
// windows, so a corpus larger than memory trains in bounded memory.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/tensor.h"

namespace tg {

// The whole content of a text file (as bytes). A regular file is sized first, so
// running out of memory is std::bad_alloc, never a text cut short; a pipe is read
// up to 1 GB (one with no writer reads as empty); a device (/dev/zero) or a socket
// is refused. Throws naming the path when it cannot be read.
std::string read_text_file(const std::string& path);

struct Batch {
  Tensor inputs;   // (B, T) int64
  Tensor targets;  // (B, T) int64: inputs shifted left by one position
};

// Where the ids of a split are.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  virtual int64_t size() const = 0;
  // ids [start, start + count) as int64 into `out`; the caller keeps the range in bounds.
  virtual void copy_window(int64_t start, int64_t count, int64_t* out) const = 0;
};

// Ids held in memory.
class InMemoryTokens final : public TokenSource {
 public:
  explicit InMemoryTokens(std::vector<int32_t> ids) : ids_(std::move(ids)) {}
  int64_t size() const override { return static_cast<int64_t>(ids_.size()); }
  void copy_window(int64_t start, int64_t count, int64_t* out) const override;

 private:
  std::vector<int32_t> ids_;
};

// Ids of one part of the corpus.
class TokenSplit {
 public:
  TokenSplit(std::string name, std::shared_ptr<const TokenSource> source)
      : name_(std::move(name)), source_(std::move(source)) {}
  // In memory; every id must fit int32 (a vocabulary is far smaller).
  TokenSplit(std::string name, const std::vector<int64_t>& ids);

  const std::string& name() const { return name_; }  // "train" or "val", named in errors
  int64_t size() const { return source_->size(); }
  // ids [start, start + count), checked to be in bounds.
  std::vector<int64_t> ids(int64_t start, int64_t count) const;

  // B random windows of T+1 ids. Draws exactly B values from `generator`, so the
  // batches of a run depend only on the seed and how many batches came before
  // (which is what makes resuming a run reproducible, and why two batches of B
  // are the same rows as one of 2B).
  // Throws when the split is too short for one window of T+1 ids.
  Batch sample_batch(int64_t batch_size, int64_t block_size, Generator& generator) const;

 private:
  std::string name_;
  std::shared_ptr<const TokenSource> source_;
};

struct TokenSplits {
  TokenSplit train;
  TokenSplit val;
};

// The first `train_fraction` of the ids (by position, not shuffled: the
// validation text is text the model never saw) and the rest:
// floor(train_fraction * N) ids train.
TokenSplits split_by_position(const std::vector<int64_t>& ids, double train_fraction = 0.9);

}  // namespace tg
