// The fused decode step (models/gpt_decode.cpp) against the module-by-module
// step: the same logits and caches bit for bit, for every switch of the config
// and any thread count; and where it cannot run, a clear reason.
#include <doctest/doctest.h>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/tiny_gpt_config.h"

using namespace tg;

namespace {

// Channels 36 (heads of 12): the gemv's 32-wide loop, its scalar tail, and 3 heads over 2 threads.
GPTConfig small(PositionalEncoding positional) {
  return testing::tiny_gpt_config({.vocab_size = 23,
                                   .n_embd = 36,
                                   .n_head = 3,
                                   .block_size = 16,
                                   .positional = positional,
                                   .preset = "decode-test"});
}

// Bigger weights than init's 0.02 spread, so that every layer moves the logits.
void scale_weights(GPT& model, double factor) {
  for (const Tensor& parameter : model.parameters())
    if (parameter.dim() == 2) raw::mul_(parameter, factor);
}

struct Run {
  std::vector<std::vector<float>> logits;  // one (V) per single-token step
  std::vector<nn::KVCache> caches;
};

// A 3-token prompt through forward_cached, then `steps` single tokens, each
// through decode_step (fused) or forward_cached with the fused step off.
Run decode(GPT& model, bool fused, int64_t steps) {
  Generator generator(5);
  const Tensor ids = randint({1, 3 + steps}, 0, model.config().vocab_size, generator);
  Run run{{}, model.make_caches(1, model.config().block_size)};
  model.set_fused_decode(false);
  model.forward_cached(raw::narrow(ids, 1, 0, 3), run.caches);
  for (int64_t step = 0; step < steps; ++step) {
    const Tensor token = raw::contiguous(raw::narrow(ids, 1, 3 + step, 1));  // (1, 1)
    const Tensor logits = fused ? model.decode_step(token, run.caches) : model.forward_cached(token, run.caches);
    CHECK(logits.shape() == Shape{1, 1, model.config().vocab_size});
    run.logits.push_back(logits.to_vector<float>());
  }
  model.set_fused_decode(true);
  return run;
}

void check_same_caches(const std::vector<nn::KVCache>& a, const std::vector<nn::KVCache>& b) {
  REQUIRE(a.size() == b.size());
  for (size_t layer = 0; layer < a.size(); ++layer) {
    CHECK(a[layer].length == b[layer].length);
    const int64_t filled = a[layer].length;
    CHECK(raw::narrow(a[layer].keys, 2, 0, filled).to_vector<float>() ==
          raw::narrow(b[layer].keys, 2, 0, filled).to_vector<float>());
    CHECK(raw::narrow(a[layer].values, 2, 0, filled).to_vector<float>() ==
          raw::narrow(b[layer].values, 2, 0, filled).to_vector<float>());
  }
}

}  // namespace

TEST_CASE("decode_step: the module-by-module step's logits and caches, bit for bit") {
  struct Variant {
    const char* name;
    PositionalEncoding positional;
    bool bias, tie;
    nn::GeluApproximation gelu;
    bool scale_embeddings;
  };
  const Variant variants[] = {
      {"gpt2: learned, biases, tied, tanh", PositionalEncoding::Learned, true, true, nn::GeluApproximation::Tanh, false},
      {"rope, no biases, untied, erf", PositionalEncoding::Rope, false, false, nn::GeluApproximation::Erf, false},
      {"sinusoidal, scaled embeddings", PositionalEncoding::Sinusoidal, true, true, nn::GeluApproximation::Tanh, true},
  };
  for (const Variant& variant : variants) {
    INFO(variant.name);
    GPTConfig config = small(variant.positional);
    config.bias = variant.bias ? nn::BiasMode::All : nn::BiasMode::None;
    config.tie_embeddings = variant.tie;
    config.gelu = variant.gelu;
    config.scale_embeddings = variant.scale_embeddings;
    GPT model(config, 3);
    scale_weights(model, 8);
    model.eval();
    const Run fused = decode(model, true, 6);
    const Run modules = decode(model, false, 6);
    for (size_t step = 0; step < fused.logits.size(); ++step) {
      INFO("step " << step);
      CHECK(fused.logits[step] == modules.logits[step]);
    }
    check_same_caches(fused.caches, modules.caches);
    CHECK(fused.logits[0] != fused.logits[1]);  // the steps really differ
  }
}

TEST_CASE("decode_step: the same logits on 1, 2 and 4 threads (4: more threads than the 3 heads)") {
  GPT model(small(PositionalEncoding::Learned), 4);
  scale_weights(model, 8);
  model.eval();
  const int threads = num_threads();
  set_num_threads(1);
  const Run one = decode(model, true, 4);
  set_num_threads(2);
  const Run two = decode(model, true, 4);
  set_num_threads(4);  // q, k, v rows split over all threads before the heads
  const Run four = decode(model, true, 4);
  set_num_threads(threads);
  CHECK(one.logits == two.logits);
  CHECK(one.logits == four.logits);
  check_same_caches(one.caches, two.caches);
  check_same_caches(one.caches, four.caches);
}

TEST_CASE("forward without gradients: the same logits on 1, 2 and 3 threads, a window's rows or a batch's") {
  // ctest runs this with OpenBLAS's Haswell kernels too, whose products sum
  // differently on different thread counts unless split one way for all
  // (autograd/linear_op.cpp): what lets the thread count follow the load
  // while generating and scoring (tensor/runtime/thread_governor.h).
  GPT model(testing::tiny_gpt_config(
                {.vocab_size = 70, .n_embd = 96, .n_head = 3, .block_size = 64, .preset = "window-test"}),
            7);
  scale_weights(model, 4);
  model.eval();
  NoGradGuard no_grad;
  Generator generator(8);
  for (const Shape& shape : {Shape{1, 64}, Shape{1, 37}, Shape{12, 64}}) {
    CAPTURE(shape);
    const Tensor ids = randint(shape, 0, 70, generator);
    const int threads = thread_ceiling();
    set_num_threads(3);  // the ceiling, fixed for a run; the count moves below it, as the thread governor moves it
    std::vector<float> logits[3];
    for (int count = 1; count <= 3; ++count) {
      use_threads(count);
      logits[count - 1] = model.forward(ids).to_vector<float>();
    }
    set_num_threads(threads);
    CHECK(logits[0] == logits[1]);
    CHECK(logits[0] == logits[2]);
  }
}

TEST_CASE("decode_step: where it cannot run it says why, and forward_cached takes the general path") {
  GPT model(small(PositionalEncoding::Learned), 6);
  model.eval();
  const Tensor token = from_vector(std::vector<int64_t>{7}, {1, 1});

  SUBCASE("two tokens, or a batch of two") {
    std::vector<nn::KVCache> caches = model.make_caches(1, 8);
    CHECK_THROWS_WITH_AS(model.decode_step(from_vector(std::vector<int64_t>{1, 2}, {1, 2}), caches),
                         doctest::Contains("ids of shape (1, 2) (the fused step takes one token, (1, 1))"), Error);
    std::vector<nn::KVCache> pair_caches = model.make_caches(2, 8);
    CHECK_THROWS_WITH_AS(model.decode_step(from_vector(std::vector<int64_t>{1, 2}, {2, 1}), pair_caches),
                         doctest::Contains("ids of shape (2, 1)"), Error);
  }
  SUBCASE("a full cache: the general path's error names the capacity") {
    std::vector<nn::KVCache> caches = model.make_caches(1, 2);
    model.forward_cached(from_vector(std::vector<int64_t>{1, 2}, {1, 2}), caches);
    CHECK_THROWS_WITH_AS(model.decode_step(token, caches), doctest::Contains("the caches are full (2 positions)"),
                         Error);
    CHECK_THROWS_WITH_AS(model.forward_cached(token, caches),
                         doctest::Contains("2 cached + 1 new positions exceed the cache capacity 2"), Error);
  }
  SUBCASE("caches of another model") {
    GPTConfig wider = small(PositionalEncoding::Learned);
    wider.n_head = 2;
    std::vector<nn::KVCache> caches = GPT(wider, 1).make_caches(1, 8);
    CHECK_THROWS_WITH_AS(model.decode_step(token, caches),
                         doctest::Contains("a cache of shape (1, 2, 8, 18) (the fused step needs make_caches(1, "
                                           "capacity): (1, 3, capacity, 12), contiguous float32)"),
                         Error);
    CHECK_THROWS_AS(model.forward_cached(token, caches), Error);
  }
  SUBCASE("an empty cache") {
    std::vector<nn::KVCache> caches(2);
    CHECK_THROWS_WITH_AS(model.decode_step(token, caches), doctest::Contains("a cache is empty"), Error);
    CHECK_THROWS_WITH_AS(model.forward_cached(token, caches), doctest::Contains("the cache is empty"), Error);
  }
  SUBCASE("float64") {
    GPT wide(small(PositionalEncoding::Learned), 6, DType::Float64);
    wide.eval();
    std::vector<nn::KVCache> caches = wide.make_caches(1, 8);
    CHECK_THROWS_WITH_AS(wide.decode_step(token, caches), doctest::Contains("the model is float64"), Error);
    CHECK(wide.forward_cached(token, caches).shape() == Shape{1, 1, 23});  // the general path
  }
}

TEST_CASE("decode_step: dropout while training is left to the general path, which applies it") {
  GPTConfig config = small(PositionalEncoding::Learned);
  config.dropout = 0.5;
  GPT model(config, 2);
  scale_weights(model, 8);
  std::vector<nn::KVCache> caches = model.make_caches(1, 8);
  const Tensor token = from_vector(std::vector<int64_t>{4}, {1, 1});
  CHECK_THROWS_WITH_AS(model.decode_step(token, caches), doctest::Contains("dropout is on (training mode)"), Error);

  // forward_cached with the fused step on, twice from the same dropout draws, and once in eval mode.
  model.dropout_generator().set_state(11, 0);
  const std::vector<float> training = model.forward_cached(token, caches).to_vector<float>();
  caches = model.make_caches(1, 8);
  model.set_fused_decode(false);
  model.dropout_generator().set_state(11, 0);
  CHECK(model.forward_cached(token, caches).to_vector<float>() == training);
  model.set_fused_decode(true);
  model.eval();
  caches = model.make_caches(1, 8);
  CHECK(model.forward_cached(token, caches).to_vector<float>() != training);
}

namespace {

// Sequences of different lengths decoded alone (decode_step), then together (decode_batch):
// each sequence's prompt of 1 + 2b tokens through forward_cached, then `steps` tokens.
struct BatchRun {
  std::vector<std::vector<std::vector<float>>> logits;  // [sequence][step] (V)
  std::vector<std::vector<nn::KVCache>> caches;          // [sequence]
};

BatchRun decode_sequences(GPT& model, int64_t sequences, int64_t steps, bool together) {
  const int64_t vocab_size = model.config().vocab_size;
  BatchRun run{std::vector<std::vector<std::vector<float>>>(sequences), {}};
  std::vector<std::vector<int64_t>> tokens(sequences);
  for (int64_t b = 0; b < sequences; ++b) {
    Generator generator(100 + b);
    const int64_t prompt = 1 + 2 * b % 9;
    tokens[b] = randint({prompt + steps}, 0, vocab_size, generator).to_vector<int64_t>();
    run.caches.push_back(model.make_caches(1, prompt + steps));
    model.forward_cached(from_vector(std::vector<int64_t>(tokens[b].begin(), tokens[b].begin() + prompt), {1, prompt}),
                         run.caches.back());
  }
  for (int64_t step = 0; step < steps; ++step) {
    std::vector<int64_t> ids;
    std::vector<std::vector<nn::KVCache>*> caches;
    for (int64_t b = 0; b < sequences; ++b) {
      ids.push_back(tokens[b][1 + 2 * b % 9 + step]);
      caches.push_back(&run.caches[b]);
    }
    if (together) {
      const Tensor logits = model.decode_batch(ids, caches);
      REQUIRE(logits.shape() == Shape{sequences, vocab_size});
      for (int64_t b = 0; b < sequences; ++b) run.logits[b].push_back(raw::select(logits, 0, b).to_vector<float>());
    } else {
      for (int64_t b = 0; b < sequences; ++b)
        run.logits[b].push_back(
            model.decode_step(from_vector(std::vector<int64_t>{ids[b]}, {1, 1}), *caches[b]).to_vector<float>());
    }
  }
  return run;
}

void check_batch_equals_alone(GPT& model) {
  for (const int64_t sequences : {1, 3, 8}) {
    CAPTURE(sequences);
    const BatchRun alone = decode_sequences(model, sequences, 4, false);
    const BatchRun together = decode_sequences(model, sequences, 4, true);
    for (int64_t b = 0; b < sequences; ++b) {
      CAPTURE(b);
      CHECK(together.logits[b] == alone.logits[b]);
      check_same_caches(together.caches[b], alone.caches[b]);
    }
    if (sequences > 1) CHECK(together.logits[0] != together.logits[1]);  // the sequences really differ
  }
}

}  // namespace

TEST_CASE("decode_batch: each sequence's logits and caches equal decoding it alone, bit for bit (batch 1, 3, 8)") {
  SUBCASE("gpt2's layout") {
    GPT model(small(PositionalEncoding::Learned), 3);
    scale_weights(model, 8);
    model.eval();
    check_batch_equals_alone(model);
  }
  SUBCASE("the modern block: RoPE, RMSNorm, SwiGLU, grouped-query attention, QK-norm") {
    GPTConfig config = small(PositionalEncoding::Rope);
    config.norm = nn::NormKind::RMSNorm;
    config.mlp = nn::MlpKind::SwiGLU;
    config.n_head = 6;
    config.n_kv_head = 2;
    config.qk_norm = true;
    config.bias = nn::BiasMode::None;
    config.tie_embeddings = false;
    GPT model(config, 4);
    scale_weights(model, 8);
    model.eval();
    check_batch_equals_alone(model);
  }
  for (const DType format : {DType::Int8, DType::BFloat16}) {
    CAPTURE(dtype_name(format));
    GPT model(testing::tiny_gpt_config({.vocab_size = 300, .n_embd = 64, .n_head = 4, .block_size = 24}), 5);
    scale_weights(model, 8);
    model.quantize(format);
    model.eval();
    check_batch_equals_alone(model);
  }
}

TEST_CASE("decode_batch: where the fused step cannot run, each sequence takes forward_cached") {
  GPT model(small(PositionalEncoding::Learned), 6, DType::Float64);
  model.eval();
  std::vector<nn::KVCache> first = model.make_caches(1, 4), second = model.make_caches(1, 4);
  model.forward_cached(from_vector(std::vector<int64_t>{1, 2}, {1, 2}), second);
  const Tensor logits = model.decode_batch({3, 4}, {&first, &second});
  CHECK(logits.shape() == Shape{2, 23});
  CHECK(first.front().length == 1);
  CHECK(second.front().length == 3);
  CHECK_THROWS_WITH_AS(model.decode_batch({3}, {&first, &second}), doctest::Contains("1 ids for 2 sequences"), Error);
}
