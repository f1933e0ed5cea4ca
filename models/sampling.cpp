#include "tinygpt/models/sampling.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>

#include "tinygpt/tensor/error.h"

namespace tg {

void SamplingOptions::validate() const {
  check(temperature > 0 && std::isfinite(temperature), "sampling: temperature ", temperature,
        " must be a positive number (use --greedy for the most likely token)");
  check(top_k >= 0, "sampling: top-k ", top_k, " must be >= 0 (0 keeps every token)");
  check(top_p > 0 && top_p <= 1, "sampling: top-p ", top_p, " must be in (0, 1]");
  check(repetition_penalty > 0 && std::isfinite(repetition_penalty), "sampling: repetition penalty ",
        repetition_penalty, " must be a positive number (1 = none)");
}

namespace {

void apply_repetition_penalty(std::vector<float>& logits, const std::vector<int64_t>& context, double penalty) {
  if (penalty == 1.0) return;
  std::vector<bool> seen(logits.size(), false);
  for (int64_t id : context) seen.at(static_cast<size_t>(id)) = true;  // each token penalised once
  for (size_t id = 0; id < logits.size(); ++id) {
    if (!seen[id]) continue;
    logits[id] = logits[id] > 0 ? static_cast<float>(logits[id] / penalty) : static_cast<float>(logits[id] * penalty);
  }
}

int64_t argmax(const std::vector<float>& values) {
  return std::max_element(values.begin(), values.end()) - values.begin();
}

// Token ids from the largest logit to the smallest, ties in id order: a stable
// radix sort of the logits' bits, four passes of 8 bits. For GPT-2's 50,257 tokens
// a comparison sort took most of a sampled token's time beside a decode step.
std::vector<int64_t> ids_by_logit(const std::vector<float>& logits) {
  const size_t count = logits.size();
  std::vector<uint32_t> keys(count), sorted_keys(count);
  std::vector<int64_t> ids(count), sorted_ids(count);
  for (size_t id = 0; id < count; ++id) {
    const float logit = logits[id] == 0.0f ? 0.0f : logits[id];  // -0 and +0 are one value
    const uint32_t bits = std::bit_cast<uint32_t>(logit);
    const uint32_t ascending = (bits & 0x80000000u) ? ~bits : bits | 0x80000000u;  // unsigned order = float order
    keys[id] = ~ascending;  // descending
    ids[id] = static_cast<int64_t>(id);
  }
  for (int shift = 0; shift < 32; shift += 8) {
    size_t starts[257] = {};
    for (const uint32_t key : keys) ++starts[((key >> shift) & 0xff) + 1];
    for (int digit = 0; digit < 256; ++digit) starts[digit + 1] += starts[digit];
    for (size_t index = 0; index < count; ++index) {
      const size_t to = starts[(keys[index] >> shift) & 0xff]++;
      sorted_keys[to] = keys[index];
      sorted_ids[to] = ids[index];
    }
    keys.swap(sorted_keys);
    ids.swap(sorted_ids);
  }
  return ids;
}

}  // namespace

int64_t choose_next_token(std::vector<float> logits, const std::vector<int64_t>& context,
                          const SamplingOptions& options, Generator& generator) {
  check(!logits.empty(), "choose_next_token: no logits (vocabulary of size 0)");
  options.validate();
  if (options.vocabulary_size > 0 && static_cast<size_t>(options.vocabulary_size) < logits.size())
    logits.resize(static_cast<size_t>(options.vocabulary_size));  // ids past the tokenizer's have no text
  for (size_t id = 0; id < logits.size(); ++id) {
    check(!std::isnan(logits[id]), "choose_next_token: the logit of token ", id, " is NaN (a broken checkpoint?)");
  }
  apply_repetition_penalty(logits, context, options.repetition_penalty);
  if (options.greedy) return argmax(logits);

  // Token ids ordered from the most to the least likely (ties in id order), so
  // top-k and top-p are both a prefix of this order.
  const std::vector<int64_t> order = ids_by_logit(logits);
  size_t kept = order.size();
  if (options.top_k > 0) kept = std::min(kept, static_cast<size_t>(options.top_k));

  // Softmax of logits / temperature over the kept tokens, in double; subtracting
  // the largest logit keeps exp() from overflowing. Not raw::softmax: a top-k
  // subset in probability order, and double throughout (the policy: tensor/softmax.h).
  const double largest = logits[order[0]];
  std::vector<double> probabilities(kept);
  double total = 0;
  for (size_t rank = 0; rank < kept; ++rank) {
    probabilities[rank] = std::exp((logits[order[rank]] - largest) / options.temperature);
    total += probabilities[rank];
  }
  for (double& probability : probabilities) probability /= total;

  if (options.top_p < 1) {
    // The smallest prefix whose mass reaches top_p (at least the most likely token).
    double mass = 0;
    size_t nucleus = 0;
    while (nucleus < kept && mass < options.top_p) mass += probabilities[nucleus++];
    kept = nucleus;
    total = mass;
  } else {
    total = 1;
  }

  // Inverse CDF over the kept tokens, renormalised by their mass.
  const double draw = generator.next_uniform() * total;
  double cumulative = 0;
  for (size_t rank = 0; rank < kept; ++rank) {
    cumulative += probabilities[rank];
    if (draw < cumulative) return order[rank];
  }
  return order[kept - 1];  // draw landed on the rounding error at the very top
}

}  // namespace tg
