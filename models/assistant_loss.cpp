#include "tinygpt/models/assistant_loss.h"

#include <algorithm>

#include "tinygpt/autograd/grad_mode.h"

namespace tg {

AssistantLoss batch_assistant_loss(GPT& model, const Batch& batch) {
  NoGradGuard no_grad;
  const int64_t* targets = batch.targets.data<int64_t>();
  const int64_t tokens = std::count_if(targets, targets + batch.targets.numel(),
                                       [](int64_t target) { return target != kIgnoredTarget; });
  if (tokens == 0) return {};
  // GPT::loss is the mean over the targets that are not ignored: times their count, their sum.
  return {model.loss(batch.inputs, batch.targets).item<double>() * static_cast<double>(tokens), tokens};
}

AssistantLoss evaluate_conversations(GPT& model, const ConversationSplit& split,
                                     std::span<const int64_t> conversations, int64_t batch_size, int64_t block_size,
                                     const ConversationProgress& progress) {
  nn::EvalModeGuard eval_mode(model);
  const std::vector<std::vector<int64_t>> batches =
      split.evaluation_batches(std::vector<int64_t>(conversations.begin(), conversations.end()), batch_size, block_size);
  AssistantLoss total;
  for (size_t i = 0; i < batches.size(); ++i) {
    const AssistantLoss loss = batch_assistant_loss(model, split.batch(batches[i], block_size));
    total.loss_sum += loss.loss_sum;
    total.tokens += loss.tokens;
    if (progress) progress(static_cast<int64_t>(i + 1), static_cast<int64_t>(batches.size()));
  }
  return total;
}

}  // namespace tg
