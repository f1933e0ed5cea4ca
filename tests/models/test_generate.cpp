// Sampling rules and generation: greedy with the KV cache equals greedy without it.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/models/sampling.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;

namespace {

// How often each token is drawn from `logits` in `draws` tries.
std::map<int64_t, int> histogram(const std::vector<float>& logits, const SamplingOptions& options, int draws) {
  Generator generator(5);
  std::map<int64_t, int> counts;
  for (int draw = 0; draw < draws; ++draw) ++counts[choose_next_token(logits, {}, options, generator)];
  return counts;
}

// Xavier weights are larger than GPT-2's 0.02: the logits differ clearly, so no
// greedy choice hangs on a rounding difference.
GPTConfig generation_config(PositionalEncoding positional) {
  GPTConfig config = tg::testing::tiny_config(positional);
  config.vocab_size = 13;
  config.init = InitScheme::XavierNormal;
  return config;
}

}  // namespace

TEST_CASE("sampling: greedy takes the largest logit, the first one on ties") {
  Generator generator(0);
  SamplingOptions greedy;
  greedy.greedy = true;
  CHECK(choose_next_token({0.1f, 2.0f, -1.0f, 2.0f}, {}, greedy, generator) == 1);
  CHECK(generator.counter() == 0);  // greedy draws nothing
}

TEST_CASE("sampling: top-k 1 and a tiny top-p both reduce to the most likely token") {
  const std::vector<float> logits = {0.5f, 1.5f, 1.0f, -2.0f};
  SamplingOptions top_k;
  top_k.top_k = 1;
  CHECK(histogram(logits, top_k, 50) == std::map<int64_t, int>{{1, 50}});
  SamplingOptions top_p;
  top_p.top_p = 1e-6;
  CHECK(histogram(logits, top_p, 50) == std::map<int64_t, int>{{1, 50}});
}

TEST_CASE("sampling: top-k 2 and top-p keep exactly the expected tokens") {
  // probabilities of ln(4), ln(3), ln(2), ln(1): 0.4, 0.3, 0.2, 0.1
  const std::vector<float> logits = {std::log(3.0f), std::log(4.0f), std::log(1.0f), std::log(2.0f)};
  SamplingOptions top_k;
  top_k.top_k = 2;
  const auto counts = histogram(logits, top_k, 2000);
  CHECK(counts.size() == 2);
  CHECK(counts.count(0) == 1);
  CHECK(counts.count(1) == 1);
  // 0.4 / 0.7 of the draws should be token 1.
  CHECK(std::abs(counts.at(1) / 2000.0 - 4.0 / 7.0) < 0.05);

  SamplingOptions top_p;
  top_p.top_p = 0.85;  // 0.4 + 0.3 + 0.2 = 0.9 >= 0.85: three tokens, not the 0.1 one
  const auto nucleus = histogram(logits, top_p, 2000);
  CHECK(nucleus.size() == 3);
  CHECK(nucleus.count(2) == 0);
}

TEST_CASE("sampling: temperature sharpens and flattens") {
  const std::vector<float> logits = {0.0f, 1.0f};
  SamplingOptions cold;
  cold.temperature = 0.05;  // e^20 : 1
  CHECK(histogram(logits, cold, 200).at(1) == 200);
  SamplingOptions hot;
  hot.temperature = 100;    // nearly uniform
  CHECK(std::abs(histogram(logits, hot, 4000).at(1) / 4000.0 - 0.5) < 0.05);
}

TEST_CASE("sampling: the repetition penalty divides positive and multiplies negative logits") {
  Generator generator(0);
  SamplingOptions options;
  options.greedy = true;
  options.repetition_penalty = 2.0;
  // token 0 seen: 3.0 -> 1.5, below token 1's 2.0
  CHECK(choose_next_token({3.0f, 2.0f, -1.0f}, {0}, options, generator) == 1);
  // token 1 seen: -0.5 -> -1.0, below token 0's -0.8
  CHECK(choose_next_token({-0.8f, -0.5f}, {1, 1}, options, generator) == 0);
}

TEST_CASE("sampling: the same seed gives the same tokens") {
  const std::vector<float> logits = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f};
  SamplingOptions options;
  CHECK(histogram(logits, options, 100) == histogram(logits, options, 100));
}

TEST_CASE("sampling: the draw walks the tokens from the largest logit down, ties in id order") {
  // The rule written plainly: a stable sort, the softmax in double over that order, the nucleus, the draw.
  const auto reference = [](const std::vector<float>& logits, const SamplingOptions& options, Generator& generator) {
    std::vector<int64_t> order(logits.size());
    for (size_t id = 0; id < order.size(); ++id) order[id] = static_cast<int64_t>(id);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return logits[a] > logits[b]; });
    size_t kept = options.top_k > 0 ? std::min(order.size(), static_cast<size_t>(options.top_k)) : order.size();
    std::vector<double> probabilities(kept);
    double total = 0;
    for (size_t rank = 0; rank < kept; ++rank)
      total += probabilities[rank] = std::exp((logits[order[rank]] - logits[order[0]]) / options.temperature);
    for (double& probability : probabilities) probability /= total;
    total = 1;
    if (options.top_p < 1) {
      double mass = 0;
      size_t nucleus = 0;
      while (nucleus < kept && mass < options.top_p) mass += probabilities[nucleus++];
      kept = nucleus;
      total = mass;
    }
    const double draw = generator.next_uniform() * total;
    double cumulative = 0;
    for (size_t rank = 0; rank < kept; ++rank)
      if (draw < (cumulative += probabilities[rank])) return order[rank];
    return order[kept - 1];
  };
  Generator values(3);
  std::vector<float> logits(5000);
  for (float& logit : logits) {  // few distinct values: many ties; both zeros; infinities' neighbours
    const double u = values.next_uniform();
    logit = u < 0.05 ? -0.0f : u < 0.1 ? 0.0f : static_cast<float>(std::floor(u * 40) - 20) * 0.25f;
  }
  logits[17] = -3e38f;
  logits[4000] = 3e-39f;  // a subnormal
  for (const SamplingOptions& options : {SamplingOptions{.temperature = 0.7}, SamplingOptions{.top_k = 300},
                                         SamplingOptions{.temperature = 2.0, .top_p = 0.6}}) {
    Generator ours(11), theirs(11);
    for (int draw = 0; draw < 300; ++draw) CHECK(choose_next_token(logits, {}, options, ours) == reference(logits, options, theirs));
  }
}

TEST_CASE("sampling: options out of range are named") {
  Generator generator(0);
  SamplingOptions options;
  options.temperature = 0;
  CHECK_THROWS_WITH_AS(choose_next_token({1.0f}, {}, options, generator), doctest::Contains("temperature 0"), tg::Error);
  options = {};
  options.top_p = 1.5;
  CHECK_THROWS_WITH_AS(options.validate(), doctest::Contains("top-p 1.5 must be in (0, 1]"), tg::Error);
  options = {};
  options.top_k = -1;
  CHECK_THROWS_WITH_AS(options.validate(), doctest::Contains("top-k -1"), tg::Error);
  options = {};
  options.repetition_penalty = 0;
  CHECK_THROWS_WITH_AS(options.validate(), doctest::Contains("repetition penalty 0"), tg::Error);
  CHECK_THROWS_WITH_AS(choose_next_token({1.0f, std::nanf("")}, {}, SamplingOptions{}, generator),
                       doctest::Contains("the logit of token 1 is NaN"), tg::Error);
}

TEST_CASE("generate: greedy with the KV cache equals greedy without it, past the context length too") {
  for (const PositionalEncoding positional :
       {PositionalEncoding::Learned, PositionalEncoding::Sinusoidal, PositionalEncoding::Rope}) {
    CAPTURE(positional_encoding_name(positional));
    GPT model(generation_config(positional), 11);
    GenerationOptions options;
    options.max_new_tokens = 20;  // prompt 3 + 20 > block size 8: the window slides
    options.sampling.greedy = true;
    int notes = 0;
    const auto count_notes = [&](const std::string&) { ++notes; };
    const std::vector<int64_t> cached = generate(model, {1, 2, 3}, options, {}, count_notes);
    options.use_cache = false;
    const std::vector<int64_t> uncached = generate(model, {1, 2, 3}, options, {}, count_notes);
    CHECK(cached.size() == 20);
    CHECK(cached == uncached);
    CHECK(notes == 2);  // one note per run, when the text passes the context length
    CHECK(model.is_training());  // generation restores the mode it found
  }
}

TEST_CASE("generate: sampling with a seed is reproducible and streams every token") {
  GPT model(generation_config(PositionalEncoding::Learned), 3);
  GenerationOptions options;
  options.max_new_tokens = 12;
  options.seed = 42;
  options.sampling.top_k = 5;
  std::vector<int64_t> streamed;
  const auto first = generate(model, {0}, options, [&](int64_t id) {
    streamed.push_back(id);
    return true;
  });
  CHECK(streamed == first);
  CHECK(generate(model, {0}, options) == first);
  options.use_cache = false;
  CHECK(generate(model, {0}, options) == first);
}

TEST_CASE("generate: a prompt longer than the context keeps its last block_size tokens") {
  GPT model(generation_config(PositionalEncoding::Rope), 5);
  GenerationOptions options;
  options.max_new_tokens = 4;
  options.sampling.greedy = true;
  const std::vector<int64_t> long_prompt = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<int64_t> its_tail(long_prompt.end() - 8, long_prompt.end());
  CHECK(generate(model, long_prompt, options).front() == generate(model, its_tail, options).front());
}

TEST_CASE("generate: bad prompts are named") {
  GPT model(generation_config(PositionalEncoding::Learned), 0);
  GenerationOptions options;
  CHECK_THROWS_WITH_AS(generate(model, {}, options), doctest::Contains("the prompt is empty"), tg::Error);
  CHECK_THROWS_WITH_AS(generate(model, {1, 13}, options),
                       doctest::Contains("prompt token 13 at position 1 is outside the vocabulary [0, 13)"), tg::Error);
}

TEST_CASE("generate: ends at a stop id (left out of the result) or when the callback says so") {
  GPT model(generation_config(PositionalEncoding::Learned), 4);
  GenerationOptions options;
  options.max_new_tokens = 12;
  options.sampling.greedy = true;
  const std::vector<int64_t> full = generate(model, {0}, options);
  REQUIRE(full.size() == 12);
  options.stop_ids = {full[4]};
  const auto first_stop = std::find(full.begin(), full.end(), full[4]);
  CHECK(generate(model, {0}, options) == std::vector<int64_t>(full.begin(), first_stop));

  options.stop_ids.clear();
  int64_t seen = 0;
  const std::vector<int64_t> three = generate(model, {0}, options, [&](int64_t) { return ++seen < 3; });
  CHECK(three == std::vector<int64_t>(full.begin(), full.begin() + 3));
}
