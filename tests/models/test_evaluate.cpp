// Evaluation over non-overlapping windows: the loss is the token-weighted mean
// of the windows' losses, whatever the batching.
#include <doctest/doctest.h>

#include <cmath>
#include <numeric>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/evaluate.h"
#include "tinygpt/tensor/factory.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;

namespace {

std::vector<int64_t> some_ids(int64_t count, int64_t vocab_size) {
  std::vector<int64_t> ids(count);
  for (int64_t i = 0; i < count; ++i) ids[i] = (i * 7 + i / 3) % vocab_size;
  return ids;
}

// GPT::loss of one window reading ids[start, start + length).
double window_loss(GPT& model, const std::vector<int64_t>& ids, int64_t start, int64_t length) {
  NoGradGuard no_grad;
  const std::vector<int64_t> inputs(ids.begin() + start, ids.begin() + start + length);
  const std::vector<int64_t> targets(ids.begin() + start + 1, ids.begin() + start + length + 1);
  return model.loss(from_vector(inputs, {1, length}), from_vector(targets, {1, length})).item<double>();
}

}  // namespace

TEST_CASE("evaluate: the mean over windows of block_size, the last one shorter") {
  GPTConfig config = tg::testing::tiny_config();
  config.vocab_size = 11;
  GPT model(config, 3);
  const std::vector<int64_t> ids = some_ids(20, config.vocab_size);  // 19 predictions: windows of 8, 8, 3
  const EvaluationResult result = evaluate(model, ids, 8);
  CHECK(result.windows == 3);
  CHECK(result.predicted_tokens == 19);
  const double expected =
      (8 * window_loss(model, ids, 0, 8) + 8 * window_loss(model, ids, 8, 8) + 3 * window_loss(model, ids, 16, 3)) / 19;
  CHECK(result.loss == doctest::Approx(expected).epsilon(1e-6));
  CHECK(result.perplexity == doctest::Approx(std::exp(expected)).epsilon(1e-6));
}

TEST_CASE("evaluate: through the KV cache, token by token, the same windows and the same loss") {
  GPTConfig config = tg::testing::tiny_config();
  config.vocab_size = 11;
  GPT model(config, 3);
  const std::vector<int64_t> ids = some_ids(20, config.vocab_size);
  const EvaluationResult forward = evaluate(model, ids, 8);
  std::vector<int64_t> reported;
  const EvaluationResult cached = evaluate(model, ids, 8, [&](int64_t done, int64_t) { reported.push_back(done); },
                                           EvaluationPath::Cached);
  CHECK(cached.windows == 3);
  CHECK(cached.predicted_tokens == 19);
  CHECK(reported == std::vector<int64_t>{8, 16, 19});
  CHECK(cached.loss == doctest::Approx(forward.loss).epsilon(1e-6));
  CHECK(cached.loss != forward.loss);  // computed another way (one row at a time), not copied
}

TEST_CASE("evaluate: a smaller block size and the shortest sequence") {
  GPTConfig config = tg::testing::tiny_config();
  config.vocab_size = 11;
  GPT model(config, 4);
  const std::vector<int64_t> ids = some_ids(9, config.vocab_size);
  const EvaluationResult by_four = evaluate(model, ids, 4);
  CHECK(by_four.windows == 2);
  CHECK(by_four.loss == doctest::Approx((window_loss(model, ids, 0, 4) + window_loss(model, ids, 4, 4)) / 2).epsilon(1e-6));
  const std::vector<int64_t> two{1, 2};
  CHECK(evaluate(model, two, 8).loss == doctest::Approx(window_loss(model, two, 0, 1)).epsilon(1e-6));
}

TEST_CASE("evaluate: leaves the model in the mode it found it") {
  GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Learned, 0.5);
  config.vocab_size = 11;
  GPT model(config, 5);
  model.train();
  const std::vector<int64_t> ids = some_ids(12, config.vocab_size);
  const double first = evaluate(model, ids, 8).loss;
  CHECK(model.is_training());
  CHECK(evaluate(model, ids, 8).loss == first);  // no dropout while evaluating: the same number twice
}

TEST_CASE("evaluate: bad input is a clear error") {
  GPTConfig config = tg::testing::tiny_config();
  config.vocab_size = 11;
  GPT model(config, 6);
  CHECK_THROWS_WITH_AS(evaluate(model, std::vector<int64_t>{3}, 8), doctest::Contains("at least 2 tokens"), tg::Error);
  CHECK_THROWS_WITH_AS(evaluate(model, std::vector<int64_t>{3, 11}, 8),
                       doctest::Contains("token id 11 at position 1 is outside the vocabulary [0, 11)"), tg::Error);
  CHECK_THROWS_WITH_AS(evaluate(model, std::vector<int64_t>{3, 4}, 9), doctest::Contains("block size 9 must be in [1, 8]"),
                       tg::Error);
}
