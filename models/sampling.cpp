#include "tinygpt/models/sampling.h"

#include <algorithm>
#include <cmath>
#include <numeric>

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

  // Token ids ordered from the most to the least likely (stable: ties keep id order),
  // so top-k and top-p are both a prefix of this order.
  std::vector<int64_t> order(logits.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
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
