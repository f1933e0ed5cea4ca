// The GPT model: configuration, parameter counts, tied weights, causality, the
// cached forward, gradients (float64) and errors.
#include <doctest/doctest.h>

#include <cmath>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/tiny_gpt_config.h"

using namespace tg;

namespace {

constexpr PositionalEncoding kAllKinds[] = {PositionalEncoding::Learned, PositionalEncoding::Sinusoidal,
                                            PositionalEncoding::Rope};

GPTConfig tiny(PositionalEncoding kind = PositionalEncoding::Learned) {
  return testing::tiny_gpt_config({.vocab_size = 11, .positional = kind});
}

Tensor random_ids(const Shape& shape, int64_t vocab_size, uint64_t seed) {
  Generator generator(seed);
  return randint(shape, 0, vocab_size, generator);
}

Tensor named(const nn::Module& model, const std::string& name) {
  for (const auto& [parameter_name, parameter] : model.named_parameters())
    if (parameter_name == name) return parameter;
  FAIL("no parameter named ", name);
  return Tensor();
}

// Larger weights than GPT-2's 0.02, so that every path matters in gradient checks.
void scale_weights(GPT& model, double factor) {
  for (const Tensor& parameter : model.parameters())
    if (parameter.dim() == 2) raw::mul_(parameter, factor);
}

void check_close(const Tensor& actual, const Tensor& expected, double tolerance) {
  REQUIRE(actual.shape() == expected.shape());
  const std::vector<double> a = actual.to_vector<double>(), b = expected.to_vector<double>();
  double worst = 0;
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - b[i]) / (1 + std::abs(b[i])));
  CHECK(worst <= tolerance);
}

}  // namespace

TEST_CASE("presets: the published GPT-2 shapes and the character-level ones") {
  const GPTConfig gpt2 = GPTConfig::preset_named("gpt2");
  CHECK(gpt2.vocab_size == 50257);
  CHECK(gpt2.block_size == 1024);
  CHECK((gpt2.n_layer == 12 && gpt2.n_head == 12 && gpt2.n_embd == 768));
  const GPTConfig medium = GPTConfig::preset_named("gpt2-medium");
  CHECK((medium.n_layer == 24 && medium.n_head == 16 && medium.n_embd == 1024));
  const GPTConfig large = GPTConfig::preset_named("gpt2-large");
  CHECK((large.n_layer == 36 && large.n_head == 20 && large.n_embd == 1280));
  const GPTConfig xl = GPTConfig::preset_named("gpt2-xl");
  CHECK((xl.n_layer == 48 && xl.n_head == 25 && xl.n_embd == 1600));
  const GPTConfig small = GPTConfig::preset_named("cpu-small", 65);
  CHECK((small.n_layer == 4 && small.n_head == 4 && small.n_embd == 128 && small.block_size == 64 &&
         small.batch_size == 12 && small.vocab_size == 65));
  const GPTConfig baby = GPTConfig::preset_named("baby", 65);
  CHECK((baby.n_layer == 6 && baby.n_head == 6 && baby.n_embd == 384 && baby.block_size == 256 &&
         baby.batch_size == 64));
  CHECK(GPTConfig::preset_named("gpt2", 100).vocab_size == 100);  // a tokenizer's vocabulary wins
  CHECK_THROWS_WITH_AS(GPTConfig::preset_named("gpt3"),
                       doctest::Contains("unknown preset 'gpt3' (known: gpt2, gpt2-medium, gpt2-large, gpt2-xl, cpu-small, baby, llama-small, smollm2-135m, qwen3-0.6b, llama-3.2-1b)"),
                       Error);
  CHECK_THROWS_WITH_AS(GPTConfig::preset_named("baby"), doctest::Contains("comes from the tokenizer"), Error);
}

TEST_CASE("parameter_count: closed form equals the model's count") {
  CHECK(GPTConfig::preset_named("gpt2").parameter_count() == 124439808);
  CHECK(GPTConfig::preset_named("gpt2-medium").parameter_count() == 354823168);
  GPTConfig untied = tiny();
  untied.tie_embeddings = false;
  GPTConfig no_bias = tiny(PositionalEncoding::Rope);
  no_bias.bias = nn::BiasMode::None;
  std::vector<GPTConfig> configs{tiny(PositionalEncoding::Learned), tiny(PositionalEncoding::Sinusoidal),
                                 tiny(PositionalEncoding::Rope), untied, no_bias,
                                 GPTConfig::preset_named("cpu-small", 65), GPTConfig::preset_named("baby", 65)};
  for (const GPTConfig& config : configs) {
    const GPT model(config, 0, DType::Float32, /*initialize=*/false);
    INFO(model.describe());
    CHECK(model.parameter_count() == config.parameter_count());
  }
  CHECK(tiny(PositionalEncoding::Learned).parameter_count() - tiny(PositionalEncoding::Rope).parameter_count() == 8 * 8);
  CHECK(untied.parameter_count() - tiny().parameter_count() == 11 * 8);
}

TEST_CASE("parameter_count of the real gpt2: 124,439,808 (tied embeddings, learned positions)") {
  const GPT model(GPTConfig::preset_named("gpt2"), 0, DType::Float32, /*initialize=*/false);
  CHECK(model.parameter_count() == 124439808);
}

TEST_CASE("config: JSON round trip and validation errors") {
  GPTConfig config = tiny(PositionalEncoding::Rope);
  config.gelu = nn::GeluApproximation::Erf;
  config.init = InitScheme::XavierNormal;
  config.dropout = 0.1;
  const GPTConfig back = GPTConfig::from_json(config.to_json());
  CHECK(back.to_json() == config.to_json());
  CHECK(back.positional == PositionalEncoding::Rope);
  CHECK(back.gelu == nn::GeluApproximation::Erf);
  CHECK(back.init == InitScheme::XavierNormal);
  CHECK(config.to_json()["init"] == "xavier_normal");  // the name checkpoints have always stored
  nlohmann::json extra = config.to_json();
  extra["n_layers"] = 3;
  CHECK_THROWS_WITH_AS(GPTConfig::from_json(extra), doctest::Contains("unknown key 'n_layers'"), Error);
  nlohmann::json missing = config.to_json();
  missing.erase("n_embd");
  CHECK_THROWS_WITH_AS(GPTConfig::from_json(missing), doctest::Contains("missing 'n_embd'"), Error);
  nlohmann::json wrong = config.to_json();
  wrong["positional"] = "alibi";
  CHECK_THROWS_WITH_AS(GPTConfig::from_json(wrong), doctest::Contains("unknown positional encoding 'alibi'"), Error);
  GPTConfig odd = tiny();
  odd.n_head = 3;
  CHECK_THROWS_WITH_AS(odd.validate(), doctest::Contains("n_embd 8 is not divisible by n_head 3"), Error);
  nlohmann::json unknown_init = config.to_json();  // an InitScheme is always valid: a bad name comes from JSON
  unknown_init["init"] = "kaiming";
  CHECK_THROWS_WITH_AS(GPTConfig::from_json(unknown_init), doctest::Contains("unknown init 'kaiming'"), Error);
  nlohmann::json fractional = config.to_json();  // a size is never rounded into range
  fractional["vocab_size"] = 65.5;
  CHECK_THROWS_WITH_AS(GPTConfig::from_json(fractional), doctest::Contains("'vocab_size' must be an integer, got 65.5"),
                       Error);
  nlohmann::json text_size = config.to_json();
  text_size["n_layer"] = "4";
  CHECK_THROWS_WITH_AS(GPTConfig::from_json(text_size), doctest::Contains("'n_layer' must be an integer, got a string"),
                       Error);
}

TEST_CASE("forward: shapes, the loss near ln(V) at initialisation, and printing") {
  GPT model(tiny(), 1);
  const Tensor ids = random_ids({2, 5}, 11, 2);
  CHECK(model.forward(ids).shape() == Shape{2, 5, 11});
  const Tensor loss = model.loss(ids, random_ids({2, 5}, 11, 3));
  CHECK(loss.dim() == 0);
  CHECK(loss.item<double>() == doctest::Approx(std::log(11.0)).epsilon(0.05));  // small weights: near-uniform
  std::ostringstream out;
  out << model;
  CHECK(out.str().find("parameters: " + std::to_string(tiny().parameter_count())) != std::string::npos);
  CHECK(out.str().find("blocks.1.attn.qkv: Linear(in=8, out=24, bias)  weight (24, 8), bias (24,)") != std::string::npos);
}

TEST_CASE("forward: errors name the problem") {
  GPT model(tiny(), 1);
  CHECK_THROWS_WITH_AS(model.forward(random_ids({1, 9}, 11, 0)),
                       doctest::Contains("sequence of 9 tokens is longer than block_size 8"), Error);
  CHECK_THROWS_WITH_AS(model.forward(from_vector<int64_t>({1, 2, 11, 3}, {2, 2})),
                       doctest::Contains("token id 11 at position (1, 0) is outside the vocabulary [0, 11)"), Error);
  CHECK_THROWS_WITH_AS(model.forward(from_vector<int64_t>({-1}, {1, 1})), doctest::Contains("token id -1"), Error);
  CHECK_THROWS_WITH_AS(model.forward(zeros({1, 2})), doctest::Contains("ids must be int64, got float32"), Error);
  CHECK_THROWS_WITH_AS(model.forward(from_vector<int64_t>({1, 2})), doctest::Contains("must be (B, T)"), Error);
  CHECK_THROWS_WITH_AS(model.loss(random_ids({1, 4}, 11, 0), random_ids({1, 3}, 11, 0)),
                       doctest::Contains("targets must be int64 of the ids' shape (1, 4)"), Error);
}

TEST_CASE("initialisation: GPT-2's scheme, deterministic from the seed") {
  GPTConfig config = GPTConfig::preset_named("cpu-small", 65);
  const GPT model(config, 5);
  auto std_of = [](const Tensor& tensor) {
    double sum = 0, squares = 0;
    for (float value : tensor.to_vector<float>()) sum += value, squares += value * value;
    const double n = static_cast<double>(tensor.numel());
    return std::sqrt(squares / n - (sum / n) * (sum / n));
  };
  CHECK(std_of(named(model, "wte.weight")) == doctest::Approx(0.02).epsilon(0.05));
  CHECK(std_of(named(model, "blocks.0.mlp.c_fc.weight")) == doctest::Approx(0.02).epsilon(0.05));
  CHECK(std_of(named(model, "blocks.0.mlp.c_proj.weight")) == doctest::Approx(0.02 / std::sqrt(8.0)).epsilon(0.05));
  CHECK(std_of(named(model, "blocks.3.attn.c_proj.weight")) == doctest::Approx(0.02 / std::sqrt(8.0)).epsilon(0.08));
  for (float value : named(model, "ln_f.weight").to_vector<float>()) CHECK(value == 1.0f);
  for (float value : named(model, "blocks.2.attn.qkv.bias").to_vector<float>()) CHECK(value == 0.0f);
  const GPT same(config, 5), other(config, 6);
  CHECK(named(same, "blocks.1.attn.qkv.weight").to_vector<float>() ==
        named(model, "blocks.1.attn.qkv.weight").to_vector<float>());
  CHECK(named(other, "wte.weight").to_vector<float>() != named(model, "wte.weight").to_vector<float>());
  config.init = InitScheme::XavierUniform;
  const GPT xavier(config, 5);
  const double bound = std::sqrt(6.0 / (128 + 384));
  double largest = 0;
  for (float value : named(xavier, "blocks.0.attn.qkv.weight").to_vector<float>())
    largest = std::max(largest, std::abs(static_cast<double>(value)));
  CHECK(largest <= bound);
}

TEST_CASE("tied embeddings: the head reads wte.weight itself") {
  GPT model(tiny(), 3);
  CHECK_FALSE(model.parameter_count() == tiny().parameter_count() + 11 * 8);
  for (const auto& [name, parameter] : model.named_parameters()) CHECK(name != "lm_head.weight");
  // Zeroing row 4 of the table zeroes logit 4 everywhere: the head uses the same storage.
  fill_(raw::select(model.wte().weight(), 0, 4), 0.0);
  const Tensor logits = model.forward(from_vector<int64_t>({1, 2, 3}, {1, 3}));
  for (int64_t t = 0; t < 3; ++t) CHECK(raw::select(raw::select(logits, 0, 0), 0, t).to_vector<float>()[4] == 0.0f);
}

TEST_CASE("tied embeddings: the gradient holds both the lookup's and the head's contributions") {
  GPTConfig untied_config = tiny();
  untied_config.tie_embeddings = false;
  GPT tied(tiny(), 4, DType::Float64), untied(untied_config, 4, DType::Float64);
  // Same seed, same draw order: every shared parameter is equal; make the head equal too.
  raw::copy_(named(untied, "lm_head.weight"), tied.wte().weight());
  const Tensor ids = random_ids({2, 6}, 11, 5), targets = random_ids({2, 6}, 11, 6);
  backward(tied.loss(ids, targets));
  backward(untied.loss(ids, targets));
  const Tensor both = raw::add(named(untied, "wte.weight").grad(), named(untied, "lm_head.weight").grad());
  check_close(tied.wte().weight().grad(), both, 1e-12);
  check_close(named(tied, "blocks.0.attn.qkv.weight").grad(), named(untied, "blocks.0.attn.qkv.weight").grad(), 1e-12);
}

TEST_CASE("causality: changing a later token leaves every earlier position's logits exactly unchanged") {
  for (PositionalEncoding kind : kAllKinds) {
    GPT model(tiny(kind), 7);
    scale_weights(model, 10);
    const Tensor ids = random_ids({2, 8}, 11, 8);
    const Tensor changed = raw::clone(ids);
    fill_(raw::narrow(changed, 1, 5, 1), 10.0);
    const Tensor before = raw::narrow(model.forward(ids), 1, 0, 5);
    const Tensor after = raw::narrow(model.forward(changed), 1, 0, 5);
    INFO(positional_encoding_name(kind));
    CHECK(before.to_vector<float>() == after.to_vector<float>());
    CHECK(raw::narrow(model.forward(ids), 1, 5, 1).to_vector<float>() !=
          raw::narrow(model.forward(changed), 1, 5, 1).to_vector<float>());
  }
}

TEST_CASE("forward_cached: a prompt then one token at a time gives the full forward's logits") {
  for (PositionalEncoding kind : kAllKinds) {
    INFO(positional_encoding_name(kind));
    GPTConfig config = tiny(kind);
    config.scale_embeddings = kind == PositionalEncoding::Sinusoidal;
    GPT model(config, 9);
    scale_weights(model, 10);
    model.eval();
    const Tensor ids = random_ids({2, 8}, 11, 10);
    const Tensor full = model.forward(ids);  // (2, 8, 11)
    std::vector<nn::KVCache> caches = model.make_caches(2, 8);
    // A 3-token prompt, a 2-token chunk, then single tokens.
    const std::vector<std::pair<int64_t, int64_t>> steps{{0, 3}, {3, 2}, {5, 1}, {6, 1}, {7, 1}};
    for (const auto& [start, length] : steps) {
      const Tensor logits = model.forward_cached(raw::narrow(ids, 1, start, length), caches);
      CHECK_FALSE(logits.requires_grad());
      check_close(logits, raw::narrow(full, 1, start, length), 1e-5);
      CHECK(caches[1].length == start + length);
    }
    CHECK_THROWS_WITH_AS(model.forward_cached(raw::narrow(ids, 1, 0, 1), caches),
                         doctest::Contains("8 cached + 1 new positions exceed block_size 8"), Error);
  }
}

TEST_CASE("forward and forward_cached: LogitPositions::Last gives the last position's logits alone") {
  GPT model(tiny(), 4);
  scale_weights(model, 10);
  model.eval();
  const Tensor ids = random_ids({2, 7}, 11, 3);
  const Tensor full = model.forward(ids);  // (2, 7, 11)
  const Tensor last = model.forward(ids, GPT::LogitPositions::Last);
  CHECK(last.shape() == Shape{2, 1, 11});
  check_close(last, raw::narrow(full, 1, 6, 1), 1e-6);
  std::vector<nn::KVCache> caches = model.make_caches(2, 8);
  check_close(model.forward_cached(raw::narrow(ids, 1, 0, 5), caches, GPT::LogitPositions::Last),
              raw::narrow(full, 1, 4, 1), 1e-5);
  check_close(model.forward_cached(raw::narrow(ids, 1, 5, 2), caches, GPT::LogitPositions::Last),
              raw::narrow(full, 1, 6, 1), 1e-5);
}

TEST_CASE("forward_cached: caches must match the model") {
  GPT model(tiny(), 1);
  CHECK_THROWS_WITH_AS(model.make_caches(1, 9), doctest::Contains("capacity 9 must be in [1, block_size = 8]"), Error);
  std::vector<nn::KVCache> caches = model.make_caches(1, 4);
  CHECK(caches.size() == 2);
  CHECK(caches[0].keys.shape() == Shape{1, 2, 4, 4});
  CHECK_THROWS_WITH_AS(model.forward_cached(random_ids({1, 5}, 11, 0), caches),
                       doctest::Contains("0 cached + 5 new positions exceed the cache capacity 4"), Error);
  CHECK_THROWS_WITH_AS(model.forward_cached(random_ids({2, 1}, 11, 0), caches),
                       doctest::Contains("for a cache of batch 1"), Error);
  caches.pop_back();
  CHECK_THROWS_WITH_AS(model.forward_cached(random_ids({1, 1}, 11, 0), caches), doctest::Contains("1 caches for 2 layers"),
                       Error);
}

TEST_CASE("gradcheck (float64): the whole GPT's loss with respect to a few parameters") {
  for (PositionalEncoding kind : kAllKinds) {
    INFO(positional_encoding_name(kind));
    GPTConfig config = tiny(kind);
    config.n_layer = 1;
    config.vocab_size = 7;
    config.block_size = 4;
    GPT model(config, 11, DType::Float64);
    scale_weights(model, 10);
    const Tensor ids = random_ids({2, 4}, 7, 12), targets = random_ids({2, 4}, 7, 13);
    // Small tensors on every path (the qkv bias moves q, k and v like the weight does).
    std::vector<Tensor> inputs{named(model, "wte.weight"), named(model, "blocks.0.attn.qkv.bias"),
                               named(model, "blocks.0.mlp.c_proj.bias"), named(model, "ln_f.weight")};
    if (kind == PositionalEncoding::Learned) inputs.push_back(named(model, "wpe.weight"));
    const GradcheckResult result = gradcheck([&](const std::vector<Tensor>&) { return model.loss(ids, targets); }, inputs);
    INFO(result.report);
    CHECK(result.ok);
  }
}

TEST_CASE("float32 and float64 models from one seed agree") {
  GPT single(tiny(PositionalEncoding::Rope), 14), twice(tiny(PositionalEncoding::Rope), 14, DType::Float64);
  scale_weights(single, 10);
  scale_weights(twice, 10);
  const Tensor ids = random_ids({2, 8}, 11, 15);
  check_close(single.forward(ids), twice.forward(ids), 1e-5);
}

TEST_CASE("train and eval: dropout is active only in training") {
  GPTConfig config = tiny();
  config.dropout = 0.3;
  GPT model(config, 16);
  const Tensor ids = random_ids({1, 8}, 11, 17);
  CHECK(model.forward(ids).to_vector<float>() != model.forward(ids).to_vector<float>());
  model.eval();
  CHECK(model.forward(ids).to_vector<float>() == model.forward(ids).to_vector<float>());
}

TEST_CASE("a GPT in a ParameterArena trains: loss falls under a few plain SGD steps") {
  GPT model(tiny(), 18);
  nn::ParameterArena arena(model);
  CHECK(arena.params().numel() == model.parameter_count());
  const Tensor ids = random_ids({4, 8}, 11, 19), targets = random_ids({4, 8}, 11, 20);
  const double first = model.loss(ids, targets).item<double>();
  for (int step = 0; step < 20; ++step) {
    arena.zero_grad();
    backward(model.loss(ids, targets));
    raw::add_(arena.params(), raw::mul(arena.grads(), -1.0));
  }
  CHECK(model.loss(ids, targets).item<double>() < first - 0.2);
}

TEST_CASE("a config the machine cannot hold is refused before anything is allocated, with both figures") {
  GPTConfig huge = tiny();
  huge.n_layer = 1'000'000'000'000;  // 10^12 blocks of 8 channels: ~9e14 parameters, petabytes of weights
  CHECK_THROWS_WITH_AS(GPT(huge, 1), doctest::Contains("GB of float32 weights alone; this machine has"), Error);
  GPTConfig overflowing = tiny();
  overflowing.n_embd = int64_t{1} << 40;
  overflowing.n_head = 1;
  CHECK_THROWS_WITH_AS(overflowing.parameter_count(), doctest::Contains("GPTConfig::parameter_count"), Error);
}
