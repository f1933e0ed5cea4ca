// The serving engine (serve/engine.h): many requests decoded together give each
// the tokens generate() gives it alone; the bounds on sequences, KV memory and
// the queue hold; cancelling, deadlines and shutdown end sequences with their reason.
#include <doctest/doctest.h>

#include <cmath>
#include <thread>

#include "tinygpt/models/generate.h"
#include "tinygpt/serve/engine.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tests/models/tiny_gpt_config.h"

using namespace tg;
using namespace tg::serve;

namespace {

std::unique_ptr<GPT> tiny_model() {
  auto model = std::make_unique<GPT>(
      testing::tiny_gpt_config({.vocab_size = 50, .n_embd = 32, .n_head = 4, .block_size = 32}), 9);
  for (const Tensor& parameter : model->parameters())  // larger weights: tokens that vary along the text
    if (parameter.dim() == 2) raw::mul_(parameter, 6.0);
  model->eval();
  return model;
}

CompletionRequest request_for(std::vector<int64_t> prompt, int64_t max_new_tokens, bool greedy, uint64_t seed) {
  CompletionRequest request;
  request.prompt = std::move(prompt);
  request.max_new_tokens = max_new_tokens;
  request.sampling.greedy = greedy;
  request.sampling.temperature = 0.8;
  request.sampling.top_p = 0.9;
  request.seed = seed;
  return request;
}

struct Outcome {
  std::vector<int64_t> ids;
  FinishReason reason = FinishReason::Failed;
  std::string error;
};

Outcome drain(TokenStream& stream) {
  Outcome outcome;
  while (true) {
    const auto event = stream.next(Clock::now() + std::chrono::seconds(60));
    REQUIRE(event.has_value());
    if (event->finished) {
      outcome.reason = event->reason;
      outcome.error = event->error;
      return outcome;
    }
    outcome.ids.push_back(event->id);
  }
}

}  // namespace

TEST_CASE("Engine: concurrent requests get exactly generate()'s tokens, queued beyond max_sequences") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  std::vector<CompletionRequest> requests;
  for (int64_t r = 0; r < 7; ++r) {
    std::vector<int64_t> prompt;
    for (int64_t i = 0; i <= r * 3 % 11; ++i) prompt.push_back((r * 7 + i * 5) % 50);
    requests.push_back(request_for(prompt, 4 + r * 2, /*greedy=*/r % 2 == 0, /*seed=*/r + 1));
  }
  std::vector<std::vector<int64_t>> expected;
  for (const CompletionRequest& request : requests) {
    GenerationOptions options;
    options.max_new_tokens = request.max_new_tokens;
    options.sampling = request.sampling;
    options.seed = request.seed;
    expected.push_back(generate(model, request.prompt, options));
  }
  Engine engine(model, {.max_sequences = 3, .max_queued = 16});
  std::vector<std::shared_ptr<TokenStream>> streams;
  for (const CompletionRequest& request : requests) streams.push_back(engine.submit(request));
  for (size_t r = 0; r < requests.size(); ++r) {
    CAPTURE(r);
    const Outcome outcome = drain(*streams[r]);
    CHECK(outcome.reason == FinishReason::Length);
    CHECK(outcome.ids == expected[r]);
    CHECK(streams[r]->prompt_tokens() == static_cast<int64_t>(requests[r].prompt.size()));
  }
  const EngineStats stats = engine.stats();
  CHECK(stats.completed == 7);
  CHECK(stats.tokens == 4 * 7 + 2 * 21);
  CHECK(stats.steps < stats.tokens - 7);  // sequences shared steps
  CHECK(expected[0] != expected[2]);
}

TEST_CASE("Engine: a stop id ends with stop, the context with length") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  Engine engine(model, {});
  const CompletionRequest free_run = request_for({3, 4, 5}, 20, true, 1);
  const Outcome unstopped = drain(*engine.submit(free_run));
  REQUIRE(unstopped.ids.size() == 20);
  CompletionRequest stopped = free_run;
  stopped.stop_ids = {unstopped.ids[5], 49};
  const Outcome outcome = drain(*engine.submit(stopped));
  CHECK(outcome.reason == FinishReason::Stop);
  const auto first_stop = std::find_if(unstopped.ids.begin(), unstopped.ids.end(),
                                       [&](int64_t id) { return id == unstopped.ids[5] || id == 49; });
  CHECK(outcome.ids == std::vector<int64_t>(unstopped.ids.begin(), first_stop));

  const Outcome long_run = drain(*engine.submit(request_for({1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 1000, true, 1)));
  CHECK(long_run.reason == FinishReason::Length);
  CHECK(long_run.ids.size() == 32 - 10);  // prompt and reply fill the context
}

TEST_CASE("Engine: bad requests are refused with the reason, a full queue as busy") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  Engine engine(model, {.max_sequences = 1, .max_queued = 2, .max_kv_bytes = 64 << 20});
  CHECK_THROWS_WITH_AS(engine.submit(request_for({}, 4, true, 1)), doctest::Contains("the prompt is empty"), Error);
  CHECK_THROWS_WITH_AS(engine.submit(request_for({1, 50}, 4, true, 1)),
                       doctest::Contains("prompt token 50 at position 1 is outside the vocabulary [0, 50)"), Error);
  CHECK_THROWS_WITH_AS(engine.submit(request_for(std::vector<int64_t>(32, 1), 4, true, 1)),
                       doctest::Contains("the prompt has 32 tokens; the model's context is 32 tokens"), Error);
  CHECK_THROWS_WITH_AS(engine.submit(request_for({1}, 0, true, 1)), doctest::Contains("max_new_tokens is 0"), Error);
  CompletionRequest bad_sampling = request_for({1}, 4, false, 1);
  bad_sampling.sampling.top_p = 1.5;
  CHECK_THROWS_AS(engine.submit(bad_sampling), Error);

  // One decoding and two queued at most: the fourth at the latest is refused.
  std::vector<std::shared_ptr<TokenStream>> streams;
  bool refused = false;
  for (int i = 0; i < 8 && !refused; ++i) {
    try {
      streams.push_back(engine.submit(request_for({1, 2}, 30, true, 1)));
    } catch (const EngineBusy& busy) {
      refused = true;
      CHECK(std::string(busy.what()).find("the server is busy") != std::string::npos);
    }
  }
  CHECK(refused);
  CHECK(streams.size() >= 2);
  CHECK(streams.size() <= 3);
  for (auto& stream : streams) CHECK(drain(*stream).reason == FinishReason::Length);
}

TEST_CASE("Engine: the KV bound holds sequences back until memory frees; the whole bound refuses a larger one") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  Engine probe(model, {});
  const int64_t one_sequence = probe.kv_bytes_for(30);
  probe.shutdown(std::chrono::milliseconds(0));
  Engine small_bound(model, {.max_kv_bytes = one_sequence - 1});
  CHECK_THROWS_WITH_AS(small_bound.submit(request_for({1, 2}, 28, true, 1)),
                       doctest::Contains("the prompt and max_tokens need 30 positions of KV cache"), Error);
  Engine engine(model, {.max_sequences = 8, .max_queued = 16, .max_kv_bytes = 2 * one_sequence});
  std::vector<std::shared_ptr<TokenStream>> streams;
  for (int i = 0; i < 5; ++i) streams.push_back(engine.submit(request_for({1, 2}, 28, true, 1)));
  int64_t most_active = 0;
  while (engine.stats().completed < 5) {
    most_active = std::max(most_active, engine.stats().active);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  CHECK(most_active <= 2);
  for (auto& stream : streams) CHECK(drain(*stream).ids.size() == 28);
}

TEST_CASE("Engine: cancel and deadline end a sequence, and its place goes to the next") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  Engine engine(model, {.max_sequences = 1, .max_queued = 4});
  const auto cancelled = engine.submit(request_for({1, 2}, 30, true, 1));
  const auto waiting = engine.submit(request_for({3}, 5, true, 1));
  cancelled->cancel();
  const Outcome first = drain(*cancelled);
  CHECK(first.reason == FinishReason::Cancelled);
  CHECK(first.ids.size() < 30);
  CHECK(drain(*waiting).reason == FinishReason::Length);

  CompletionRequest late = request_for({1, 2}, 30, true, 1);
  late.deadline = Clock::now();
  CHECK(drain(*engine.submit(late)).reason == FinishReason::TimedOut);
}

TEST_CASE("Engine: shutdown ends what is in flight and queued, and refuses what comes after") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  Engine engine(model, {.max_sequences = 1, .max_queued = 8});
  std::vector<std::shared_ptr<TokenStream>> streams;
  for (int i = 0; i < 6; ++i) streams.push_back(engine.submit(request_for({1, 2}, 30, true, 1)));
  engine.shutdown(std::chrono::milliseconds(0));
  int shut_down = 0;
  for (auto& stream : streams) {
    const Outcome outcome = drain(*stream);
    CHECK((outcome.reason == FinishReason::ShutDown || outcome.reason == FinishReason::Length));
    shut_down += outcome.reason == FinishReason::ShutDown;
  }
  CHECK(shut_down >= 1);  // the last of six queued behind one place cannot have run by then
  CHECK_THROWS_AS(engine.submit(request_for({1}, 4, true, 1)), EngineBusy);
}

TEST_CASE("Engine: run_on_model runs a task on the engine's thread between steps, its error passed back") {
  const std::unique_ptr<GPT> owned = tiny_model();
  GPT& model = *owned;
  const CompletionRequest request = request_for({3, 4, 5}, 20, false, 7);
  GenerationOptions options;
  options.max_new_tokens = request.max_new_tokens;
  options.sampling = request.sampling;
  options.seed = request.seed;
  const std::vector<int64_t> expected = generate(model, request.prompt, options);

  Engine engine(model, {});
  const std::shared_ptr<TokenStream> stream = engine.submit(request);
  REQUIRE(stream->next(Clock::now() + std::chrono::seconds(60)).has_value());  // decoding has begun
  std::thread::id ran_on;
  double logit = 0;
  engine.run_on_model([&](GPT& given) {
    ran_on = std::this_thread::get_id();
    CHECK(&given == &model);
    logit = given.forward(from_vector(std::vector<int64_t>{1, 2}, {1, 2})).to_vector<double>()[0];
  });
  CHECK(ran_on != std::this_thread::get_id());
  CHECK(std::isfinite(logit));
  CHECK_THROWS_WITH_AS(engine.run_on_model([](GPT&) { throw Error("the task failed"); }), "the task failed", Error);
  // The sequence decoding meanwhile got generate()'s tokens all the same.
  Outcome outcome = drain(*stream);
  CHECK(outcome.reason == FinishReason::Length);
  CHECK(outcome.ids.size() == expected.size() - 1);
  CHECK(std::equal(outcome.ids.begin(), outcome.ids.end(), expected.begin() + 1));

  engine.shutdown(std::chrono::milliseconds(0));
  CHECK_THROWS_AS(engine.run_on_model([](GPT&) {}), EngineBusy);
}
