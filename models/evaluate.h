// Evaluation: how well a model predicts a token sequence, as the mean
// next-token cross-entropy (natural log) and its perplexity exp(loss).
//
// The sequence is cut into non-overlapping windows of up to `block_size` + 1
// tokens that share their boundary token: window w reads ids[wT .. wT+T) and
// predicts ids[wT+1 .. wT+T+1), so every token after the first is predicted
// exactly once, from at most T tokens of context (fewer at the start of each
// window: the usual trade of this method against a sliding window, which costs
// T times more). The last window may be shorter. The mean is over all
// predicted tokens, accumulated in double.
#pragma once
#include <cstdint>
#include <functional>
#include <span>

#include "tinygpt/models/gpt.h"

namespace tg {

struct EvaluationResult {
  double loss = 0;        // mean cross-entropy per predicted token
  double perplexity = 0;  // exp(loss)
  int64_t predicted_tokens = 0;
  int64_t windows = 0;
};

// Called after each batch of windows with the tokens predicted so far.
using EvaluationProgress = std::function<void(int64_t predicted_tokens, int64_t total)>;

// Throws tg::Error naming the problem unless ids are in [0, V), at least 2 of
// them, and 1 <= block_size <= the model's block_size.
void check_evaluation_input(const GPT& model, std::span<const int64_t> ids, int64_t block_size);

// How each window's logits are computed:
//   Forward  one forward of the window, all positions at once (fast)
//   Cached   one token at a time through the KV cache, each a decode step
//            (GPT::forward_cached): the numbers generation computes. The same
//            loss up to float32 rounding, but for int8 weights, whose decode
//            step rounds its activations to int8 blocks too (nn/quantize.h).
enum class EvaluationPath { Forward, Cached };

// The loss of `ids` (checked as above) with windows of `block_size`.
// Runs in eval mode without recording a graph (restores the model's mode).
EvaluationResult evaluate(GPT& model, std::span<const int64_t> ids, int64_t block_size,
                          const EvaluationProgress& progress = {}, EvaluationPath path = EvaluationPath::Forward);

}  // namespace tg
