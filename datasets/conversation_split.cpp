#include "tinygpt/datasets/conversation_split.h"

#include <algorithm>
#include <numeric>

#include "tinygpt/datasets/length_grouped_batches.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/factory.h"

namespace tg {

namespace {

constexpr size_t kCachedEpochs = 8;  // one per data generator: a single process replaying up to 8 ranks

}  // namespace

ConversationSplit::ConversationSplit(TokenSplit tokens, std::vector<int64_t> starts, std::vector<uint8_t> trained)
    : tokens_(std::move(tokens)), starts_(std::move(starts)),
      trained_(std::make_shared<const std::vector<uint8_t>>(std::move(trained))) {
  check(starts_.size() >= 2 && starts_.front() == 0 && starts_.back() == tokens_.size() &&
            static_cast<int64_t>(trained_->size()) == tokens_.size(),
        "ConversationSplit: ", starts_.size(), " starts and ", trained_->size(), " flags for ", tokens_.size(),
        " ids of the ", tokens_.name(), " split; expected a start per conversation, the last at the end, and a flag per id");
  for (size_t i = 1; i < starts_.size(); ++i)
    check(starts_[i] >= starts_[i - 1] + 2, "ConversationSplit: conversation ", i - 1, " of the ", tokens_.name(),
          " split has ", starts_[i] - starts_[i - 1], " ids; at least 2 make one example");
}

int64_t ConversationSplit::assistant_tokens() const {
  return std::count(trained_->begin(), trained_->end(), uint8_t{1});
}

std::span<const uint8_t> ConversationSplit::trained(int64_t conversation) const {
  return std::span<const uint8_t>(*trained_).subspan(static_cast<size_t>(starts_[conversation]),
                                                      static_cast<size_t>(length(conversation)));
}

int64_t ConversationSplit::examples(int64_t conversation, int64_t block_size) const {
  return std::min(length(conversation) - 1, block_size);
}

ConversationFit ConversationSplit::fit(int64_t block_size) const {
  ConversationFit fit;
  for (int64_t c = 0; c < size(); ++c) {
    // Example t predicts id t + 1: the targets are ids 1 .. examples.
    const std::span<const uint8_t> flags = trained(c).subspan(1, static_cast<size_t>(examples(c, block_size)));
    const int64_t targets = std::count(flags.begin(), flags.end(), uint8_t{1});
    fit.cut += length(c) - 1 > block_size ? 1 : 0;
    if (targets == 0) {
      ++fit.left_out;
      continue;
    }
    ++fit.usable;
    fit.assistant_targets += targets;
  }
  return fit;
}

std::vector<int64_t> ConversationSplit::usable(int64_t block_size) const {
  std::vector<int64_t> result;
  for (int64_t c = 0; c < size(); ++c) {
    const std::span<const uint8_t> flags = trained(c).subspan(1, static_cast<size_t>(examples(c, block_size)));
    if (std::find(flags.begin(), flags.end(), uint8_t{1}) != flags.end()) result.push_back(c);
  }
  return result;
}

const std::vector<int64_t>& ConversationSplit::usable_cached(int64_t block_size) const {
  if (usable_block_size_ != block_size) {
    usable_ = usable(block_size);
    usable_block_size_ = block_size;
  }
  return usable_;
}

Batch ConversationSplit::batch(std::span<const int64_t> conversations, int64_t block_size) const {
  check(!conversations.empty() && block_size > 0, "ConversationSplit::batch: ", conversations.size(),
        " conversations at block size ", block_size);
  int64_t longest = 0;
  for (const int64_t c : conversations) {
    check(c >= 0 && c < size(), "ConversationSplit::batch: conversation ", c, " of the ", name(), " split, which has ",
          size());
    longest = std::max(longest, examples(c, block_size));
  }
  const int64_t rows = static_cast<int64_t>(conversations.size());
  Batch batch{zeros({rows, longest}, DType::Int64), full({rows, longest}, kIgnoredTarget, DType::Int64)};
  int64_t* inputs = batch.inputs.data<int64_t>();
  int64_t* targets = batch.targets.data<int64_t>();
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t c = conversations[static_cast<size_t>(r)], count = examples(c, block_size);
    const std::vector<int64_t> ids = tokens_.ids(starts_[c], count + 1);
    const std::span<const uint8_t> flags = trained(c);
    for (int64_t t = 0; t < count; ++t) {
      inputs[r * longest + t] = ids[static_cast<size_t>(t)];
      if (flags[static_cast<size_t>(t + 1)]) targets[r * longest + t] = ids[static_cast<size_t>(t + 1)];
    }
  }
  return batch;
}

const ConversationSplit::Epoch& ConversationSplit::epoch_of(uint64_t seed, int64_t epoch, int64_t batch_size,
                                                            int64_t block_size) const {
  for (const Epoch& cached : epochs_)
    if (cached.seed == seed && cached.epoch == epoch && cached.batch_size == batch_size &&
        cached.block_size == block_size)
      return cached;
  const std::vector<int64_t>& usable = usable_cached(block_size);
  std::vector<int64_t> lengths(usable.size());
  for (size_t i = 0; i < usable.size(); ++i) lengths[i] = examples(usable[i], block_size);
  Generator order(Generator(seed).bits(static_cast<uint64_t>(epoch)));  // epoch e's own stream of the data seed
  Epoch made{seed, epoch, batch_size, block_size, length_grouped_batches(lengths, batch_size, order)};
  for (std::vector<int64_t>& rows : made.batches)
    for (int64_t& row : rows) row = usable[static_cast<size_t>(row)];  // positions in `usable` -> conversations
  // The generator that asked for it is the one likeliest to ask again: drop an entry of another.
  std::erase_if(epochs_, [&](const Epoch& cached) { return cached.seed == seed; });
  if (epochs_.size() >= kCachedEpochs) epochs_.erase(epochs_.begin());
  epochs_.push_back(std::move(made));
  return epochs_.back();
}

Batch ConversationSplit::sample_batch(int64_t batch_size, int64_t block_size, Generator& generator) const {
  const int64_t usable = static_cast<int64_t>(usable_cached(block_size).size());
  check(usable > 0, "train: no conversation of the ", name(), " split has an assistant token within the block size ",
        block_size, "; use a larger --block-size");
  const int64_t per_epoch = (usable + batch_size - 1) / batch_size;
  const int64_t micro_batch = static_cast<int64_t>(generator.advance(1));
  const Epoch& epoch = epoch_of(generator.seed(), micro_batch / per_epoch, batch_size, block_size);
  return batch(epoch.batches[static_cast<size_t>(micro_batch % per_epoch)], block_size);
}

double ConversationSplit::padding_fraction(int64_t batch_size, int64_t block_size, const Generator& generator) const {
  const int64_t usable = static_cast<int64_t>(usable_cached(block_size).size());
  if (usable == 0) return 0;
  const int64_t per_epoch = (usable + batch_size - 1) / batch_size;
  const Epoch& epoch =
      epoch_of(generator.seed(), static_cast<int64_t>(generator.counter()) / per_epoch, batch_size, block_size);
  std::vector<int64_t> lengths(static_cast<size_t>(size()));
  for (int64_t c = 0; c < size(); ++c) lengths[static_cast<size_t>(c)] = examples(c, block_size);
  return tg::padding_fraction(epoch.batches, lengths);
}

std::vector<std::vector<int64_t>> ConversationSplit::evaluation_batches(std::vector<int64_t> conversations,
                                                                        int64_t batch_size, int64_t block_size) const {
  std::stable_sort(conversations.begin(), conversations.end(),
                   [&](int64_t a, int64_t b) { return examples(a, block_size) > examples(b, block_size); });
  std::vector<std::vector<int64_t>> batches;
  for (size_t start = 0; start < conversations.size(); start += static_cast<size_t>(batch_size))
    batches.emplace_back(conversations.begin() + static_cast<std::ptrdiff_t>(start),
                         conversations.begin() +
                             static_cast<std::ptrdiff_t>(std::min(conversations.size(), start + batch_size)));
  return batches;
}

Batch stack_rows(const std::vector<Batch>& batches) {
  int64_t rows = 0, longest = 0;
  for (const Batch& batch : batches) rows += batch.inputs.shape()[0], longest = std::max(longest, batch.inputs.shape()[1]);
  Batch stacked{zeros({rows, longest}, DType::Int64), full({rows, longest}, kIgnoredTarget, DType::Int64)};
  int64_t row = 0;
  for (const Batch& batch : batches) {
    const int64_t count = batch.inputs.shape()[0], width = batch.inputs.shape()[1];
    for (int64_t r = 0; r < count; ++r, ++row) {
      std::copy_n(batch.inputs.data<int64_t>() + r * width, width, stacked.inputs.data<int64_t>() + row * longest);
      std::copy_n(batch.targets.data<int64_t>() + r * width, width, stacked.targets.data<int64_t>() + row * longest);
    }
  }
  return stacked;
}

}  // namespace tg
