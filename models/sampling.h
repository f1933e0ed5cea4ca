// Choosing the next token from the model's logits.
//
// The steps, in the order they apply (each one optional):
//   1. repetition penalty r: every token already in the context has its logit
//      divided by r when positive and multiplied by r when negative, so r > 1
//      always makes it less likely (the rule of Keskar et al.'s CTRL, as in
//      Hugging Face's RepetitionPenaltyLogitsProcessor);
//   2. greedy: take the largest logit (first one on ties) and stop here;
//   3. temperature t: logits / t (t < 1 sharpens, t > 1 flattens);
//   4. top-k: keep only the k largest logits;
//   5. softmax, then top-p (nucleus): keep the smallest set of most likely
//      tokens whose probabilities add up to at least p;
//   6. draw one token from what is left, renormalised, with one uniform number
//      from the generator.
#pragma once
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/random.h"

namespace tg {

struct SamplingOptions {
  double temperature = 1.0;         // > 0
  int64_t top_k = 0;                // 0 = no limit
  double top_p = 1.0;               // in (0, 1]; 1 = no limit
  double repetition_penalty = 1.0;  // > 0; 1 = none
  bool greedy = false;
  // > 0: only ids below it are drawn, for a model whose embedding table is larger than its
  // tokenizer's vocabulary (padded, as nanoGPT's 50,304 rows for GPT-2's 50,257 tokens).
  int64_t vocabulary_size = 0;

  // Throws tg::Error naming the option and its value when one is out of range.
  void validate() const;
};

// The next token id given the logits of the last position (V values) and the
// ids seen so far (for the repetition penalty). Draws one value from
// `generator` unless greedy.
int64_t choose_next_token(std::vector<float> logits, const std::vector<int64_t>& context,
                          const SamplingOptions& options, Generator& generator);

}  // namespace tg
