#include "tinygpt/models/evaluate.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/thread_governor.h"

namespace tg {

namespace {

// Windows per forward pass: as many as keep the logits (B, T, V) near 64 MB.
int64_t windows_per_batch(int64_t block_size, int64_t vocab_size) {
  constexpr int64_t kLogitBudget = int64_t{16} << 20;  // floats
  return std::clamp<int64_t>(kLogitBudget / (block_size * vocab_size), 1, 64);
}

// The mean loss of `count` windows of `length` predicted tokens starting at
// ids[first], ids[first + length], ...: inputs ids[s, s+length), targets ids[s+1, s+length+1).
double batch_loss(GPT& model, std::span<const int64_t> ids, int64_t first, int64_t count, int64_t length) {
  std::vector<int64_t> inputs, targets;
  inputs.reserve(count * length);
  targets.reserve(count * length);
  for (int64_t window = 0; window < count; ++window) {
    const int64_t start = first + window * length;
    inputs.insert(inputs.end(), ids.begin() + start, ids.begin() + start + length);
    targets.insert(targets.end(), ids.begin() + start + 1, ids.begin() + start + length + 1);
  }
  return model.loss(from_vector(inputs, {count, length}), from_vector(targets, {count, length})).item<double>();
}

// The summed loss of one window read token by token through the KV cache:
// inputs ids[start, start+length), targets ids[start+1, start+length+1).
double cached_window_loss(GPT& model, std::span<const int64_t> ids, int64_t start, int64_t length) {
  std::vector<nn::KVCache> caches = model.make_caches(1, length);
  double loss_sum = 0;
  for (int64_t position = start; position < start + length; ++position) {
    const std::vector<float> logits = model.forward_cached(from_vector<int64_t>({ids[position]}, {1, 1}), caches)
                                          .to_vector<float>();  // (V)
    const double largest = *std::max_element(logits.begin(), logits.end());
    double total = 0;
    for (float logit : logits) total += std::exp(double{logit} - largest);
    loss_sum += largest + std::log(total) - logits[ids[position + 1]];  // -log softmax(logits)[target]
  }
  return loss_sum;
}

}  // namespace

void check_evaluation_input(const GPT& model, std::span<const int64_t> ids, int64_t block_size) {
  const GPTConfig& config = model.config();
  check(ids.size() >= 2, "evaluate: need at least 2 tokens (one to read, one to predict), got ", ids.size());
  check(block_size >= 1 && block_size <= config.block_size, "evaluate: block size ", block_size,
        " must be in [1, ", config.block_size, "] (the model's context length)");
  for (size_t position = 0; position < ids.size(); ++position) {
    check(ids[position] >= 0 && ids[position] < config.vocab_size, "evaluate: token id ", ids[position],
          " at position ", position, " is outside the vocabulary [0, ", config.vocab_size, ")");
  }
}

EvaluationResult evaluate(GPT& model, std::span<const int64_t> ids, int64_t block_size,
                          const EvaluationProgress& progress, EvaluationPath path) {
  check_evaluation_input(model, ids, block_size);
  const GPTConfig& config = model.config();
  NoGradGuard no_grad;
  nn::EvalModeGuard eval_mode(model);
  const int64_t predicted = static_cast<int64_t>(ids.size()) - 1;
  const int64_t full_windows = predicted / block_size;
  const int64_t remainder = predicted % block_size;
  const int64_t batch = path == EvaluationPath::Cached ? 1 : windows_per_batch(block_size, config.vocab_size);
  // The summed loss of `count` windows of `length` predicted tokens from ids[first].
  const auto windows_loss = [&](int64_t first, int64_t count, int64_t length) {
    if (path == EvaluationPath::Forward)
      return batch_loss(model, ids, first, count, length) * static_cast<double>(count * length);
    return cached_window_loss(model, ids, first, length);  // count is 1
  };

  EvaluationResult result;
  double loss_sum = 0;  // sum over predicted tokens
  for (int64_t window = 0; window < full_windows; window += batch) {
    adapt_threads_to_load();  // tensor/runtime/thread_governor.h
    const int64_t count = std::min(batch, full_windows - window);
    loss_sum += windows_loss(window * block_size, count, block_size);
    result.predicted_tokens += count * block_size;
    result.windows += count;
    if (progress) progress(result.predicted_tokens, predicted);
  }
  if (remainder > 0) {
    loss_sum += windows_loss(full_windows * block_size, 1, remainder);
    result.predicted_tokens += remainder;
    result.windows += 1;
    if (progress) progress(result.predicted_tokens, predicted);
  }
  result.loss = loss_sum / static_cast<double>(result.predicted_tokens);
  result.perplexity = std::exp(result.loss);
  return result;
}

}  // namespace tg
