// The loss of a chat model on conversations, over the assistant's tokens only
// (datasets/conversation_split.h): what `train` reports on conversation data
// and `tinygpt eval` on a .jsonl file.
//
// Each conversation is scored once, whole (cut to the block size), in batches
// of similar lengths; the mean is over every assistant token of all of them,
// summed in double: a long answer weighs as its tokens do, whatever the batch
// it fell in. The batches are fixed by the conversations, so the number is the
// same at every evaluation.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "tinygpt/datasets/conversation_split.h"
#include "tinygpt/models/gpt.h"

namespace tg {

struct AssistantLoss {
  double loss_sum = 0;     // of -log p over the assistant's tokens
  int64_t tokens = 0;      // assistant tokens scored
  double mean() const { return tokens > 0 ? loss_sum / static_cast<double>(tokens) : 0; }
};

// The summed loss of one batch's assistant targets (those not -100). No graph
// is recorded; the model's mode is the caller's.
AssistantLoss batch_assistant_loss(GPT& model, const Batch& batch);

// Called after each batch: batches done, of how many.
using ConversationProgress = std::function<void(int64_t batches_done, int64_t batches)>;

// The loss over `conversations` of `split` (usable ones: datasets/conversation_split.h),
// in eval mode without a graph (restoring the model's mode).
AssistantLoss evaluate_conversations(GPT& model, const ConversationSplit& split,
                                     std::span<const int64_t> conversations, int64_t batch_size, int64_t block_size,
                                     const ConversationProgress& progress = {});

}  // namespace tg
