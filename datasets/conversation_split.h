// The conversations of one split (train or val) of a chat SFT run, rendered and
// encoded (datasets/assistant_spans.h), and the batches training draws from them.
//
// The ids of all conversations lie one after another in a TokenSplit (in
// memory, or a prepared dataset's token file); `starts` says where each begins,
// and one flag per id says whether it is the assistant's, i.e. a target of the
// loss. A conversation of n ids is n - 1 next-token examples; at block size T
// its first min(n - 1, T) are kept (a longer conversation is cut to the block).
//
// A batch is one conversation per row, padded to the longest row of that batch,
// not to T (B, T_batch) with T_batch <= T:
//
//   inputs[r, t]  = ids[t]                                        t < len_r, else 0 (padding)
//   targets[r, t] = ids[t + 1] if id t + 1 is the assistant's     t < len_r,
//                   -100 otherwise (and on padding)
//
// -100 is the ignore index of nn/functional/cross_entropy.h, so the loss is the
// mean over the assistant's tokens only. Padding sits after a row's last real
// position, so under causal attention it cannot change a real position's
// logits, and its targets add nothing to the loss.
//
// Training draws the batches of an epoch grouped by length
// (datasets/length_grouped_batches.h). The run's data generator gives only a
// counter: micro-batch m is batch (m mod per_epoch) of epoch (m div per_epoch),
// and epoch e's order is drawn from a generator seeded by (the data generator's
// seed, e). So a batch is a pure function of the generator's state, which the
// run's checkpoints carry, and a resumed run draws exactly the batches the
// uninterrupted one would have.
#pragma once
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "tinygpt/datasets/data.h"
#include "tinygpt/tensor/random.h"

namespace tg {

inline constexpr int64_t kIgnoredTarget = -100;  // nn::cross_entropy's default ignore_index

// How a split's conversations fit a block size.
struct ConversationFit {
  int64_t usable = 0;    // with at least one assistant target among their first T examples
  int64_t cut = 0;       // longer than the block (more than T + 1 ids): cut to it
  int64_t left_out = 0;  // no assistant token within the block: never drawn, never scored
  int64_t assistant_targets = 0;  // of the usable conversations, within the block
};

class ConversationSplit {
 public:
  // `starts` has one entry per conversation and a last one equal to tokens.size();
  // `trained` one flag per id. Throws tg::Error when they do not fit together.
  ConversationSplit(TokenSplit tokens, std::vector<int64_t> starts, std::vector<uint8_t> trained);

  const std::string& name() const { return tokens_.name(); }
  int64_t size() const { return static_cast<int64_t>(starts_.size()) - 1; }  // conversations
  int64_t tokens() const { return tokens_.size(); }
  int64_t assistant_tokens() const;
  int64_t length(int64_t conversation) const { return starts_[conversation + 1] - starts_[conversation]; }
  const TokenSplit& token_split() const { return tokens_; }
  std::span<const uint8_t> trained(int64_t conversation) const;

  ConversationFit fit(int64_t block_size) const;
  // The usable conversations at this block size, in file order.
  std::vector<int64_t> usable(int64_t block_size) const;

  // The rows of `conversations`, padded to the longest (B, T_batch) each.
  Batch batch(std::span<const int64_t> conversations, int64_t block_size) const;

  // The next micro-batch of the epochs above; advances `generator`'s counter by one.
  // Throws tg::Error when no conversation is usable at this block size.
  Batch sample_batch(int64_t batch_size, int64_t block_size, Generator& generator) const;
  // The share of padding in the epoch whose batch `generator` would draw next.
  double padding_fraction(int64_t batch_size, int64_t block_size, const Generator& generator) const;

  // `conversations` (usable ones) sorted longest first and cut into batches of
  // up to batch_size: each scored once, with little padding, the same batches
  // every time (evaluation).
  std::vector<std::vector<int64_t>> evaluation_batches(std::vector<int64_t> conversations, int64_t batch_size,
                                                       int64_t block_size) const;

 private:
  struct Epoch {
    uint64_t seed = 0;
    int64_t epoch = -1, batch_size = 0, block_size = 0;
    std::vector<std::vector<int64_t>> batches;
  };
  int64_t examples(int64_t conversation, int64_t block_size) const;  // min(n - 1, T)
  const std::vector<int64_t>& usable_cached(int64_t block_size) const;
  const Epoch& epoch_of(uint64_t seed, int64_t epoch, int64_t batch_size, int64_t block_size) const;

  TokenSplit tokens_;
  std::vector<int64_t> starts_;                   // (N + 1)
  std::shared_ptr<const std::vector<uint8_t>> trained_;  // (tokens): shared by copies
  // Caches of what sample_batch recomputes otherwise (one epoch's order a data
  // generator, a few of them for draw_batches_as_ranks); not thread-safe.
  mutable int64_t usable_block_size_ = -1;
  mutable std::vector<int64_t> usable_;
  mutable std::vector<Epoch> epochs_;
};

// Rows of several batches in one, padded to the longest: a micro-batch drawn as
// slices of the ranks of a job (training/train.h's draw_batches_as_ranks).
Batch stack_rows(const std::vector<Batch>& batches);

}  // namespace tg
