// The course's smaller models (docs/course/): a bigram model (0 layers) and
// attention-only blocks (MlpKind::None). They match PyTorch (fixtures by
// tests/reference/make_course_fixtures.py), their parameters are what
// parameter_count says, their gradients pass a numeric check, the cached and
// batched decoding paths give the full forward's logits, and their configs
// survive a checkpoint's JSON; what cannot work is refused.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/tiny_gpt_config.h"
#include "tests/models/torch_model_match.h"

using namespace tg;

namespace {

GPTConfig attention_only(int64_t layers = 2) {
  GPTConfig config = testing::tiny_gpt_config({.vocab_size = 11});
  config.n_layer = layers;
  config.mlp = nn::MlpKind::None;
  return config;
}

GPTConfig bigram() {
  GPTConfig config = testing::tiny_gpt_config({.vocab_size = 11, .positional = PositionalEncoding::Rope});
  config.n_layer = 0;
  config.tie_embeddings = false;
  return config;
}

Tensor random_ids(const Shape& shape, int64_t vocab_size, uint64_t seed) {
  Generator generator(seed);
  return randint(shape, 0, vocab_size, generator);
}

int64_t parameters_held(const GPT& model) {
  int64_t count = 0;
  for (const auto& [name, parameter] : model.named_parameters()) count += parameter.numel();
  return count;
}

Tensor named(const nn::Module& model, const std::string& name) {
  for (const auto& [parameter_name, parameter] : model.named_parameters())
    if (parameter_name == name) return parameter;
  FAIL("no parameter ", name);
  return Tensor();
}

// Logits of each position of `ids` (1, T) from forward_cached fed one token at a time.
std::vector<float> cached_logits(GPT& model, const Tensor& ids) {
  std::vector<nn::KVCache> caches = model.make_caches(1, ids.size(1));
  std::vector<float> all;
  for (int64_t t = 0; t < ids.size(1); ++t) {
    const Tensor logits = model.forward_cached(raw::narrow(ids, 1, t, 1), caches);  // (1, 1, V)
    const std::vector<float> row = raw::contiguous(logits).to_vector<float>();
    all.insert(all.end(), row.begin(), row.end());
  }
  return all;
}

}  // namespace

TEST_CASE("the bigram and an attention-only GPT match PyTorch: logits, loss and every gradient") {
  for (const std::string name : {"bigram", "attention_only"}) {
    CAPTURE(name);
    const SafetensorsFile fixture = load_safetensors("tests/fixtures/course/" + name + ".safetensors");
    const GPTConfig config = GPTConfig::from_json(nlohmann::json::parse(fixture.metadata.at("config")));
    GPT model(config, 0, DType::Float32, /*initialize=*/false);
    int64_t copied = 0;
    for (const auto& [parameter_name, parameter] : model.named_parameters()) {
      raw::copy_(parameter, fixture.at("param." + parameter_name));
      ++copied;
    }
    CHECK(copied * 2 + 4 == static_cast<int64_t>(fixture.tensors.size()));  // param. and grad. of each, and 4 more
    const Tensor inputs = fixture.at("inputs"), targets = fixture.at("targets");
    testing::check_matches(model.forward(inputs), fixture.at("logits"), "logits");
    const Tensor loss = model.loss(inputs, targets);
    testing::check_matches(loss, fixture.at("loss"), "loss");
    backward(loss);
    for (const auto& [parameter_name, parameter] : model.named_parameters())
      testing::check_matches(parameter.grad(), fixture.at("grad." + parameter_name), "grad." + parameter_name);
  }
}

TEST_CASE("attention-only blocks: no ln_2 and no MLP, and the parameters parameter_count says") {
  for (nn::BiasMode bias : {nn::BiasMode::All, nn::BiasMode::None}) {
    GPTConfig config = attention_only();
    config.bias = bias;
    const GPT model(config, 1);
    CHECK(parameters_held(model) == config.parameter_count());
    for (const auto& [name, parameter] : model.named_parameters()) {
      CHECK(name.find(".mlp.") == std::string::npos);
      CHECK(name.find(".ln_2.") == std::string::npos);
    }
  }
  // The block adds attention's branch to the stream, and nothing more.
  GPT model(attention_only(1), 2);
  NoGradGuard no_grad;
  Generator generator(3);
  const Tensor x = randn({2, 5, 8}, generator);
  const nn::Block& block = model.block(0);
  const Tensor expected = add(x, block.attn().forward(block.ln_1().forward(x)));
  CHECK(raw::contiguous(block.forward(x)).to_vector<float>() == raw::contiguous(expected).to_vector<float>());
}

TEST_CASE("a bigram model: 0 layers, each position's logits from its own token only") {
  GPT model(bigram(), 4);
  // wte V C + ln_f's weight and bias 2 C + lm_head V C
  CHECK(parameters_held(model) == 11 * 8 + 2 * 8 + 11 * 8);
  CHECK(model.config().parameter_count() == parameters_held(model));
  const Tensor ids = from_vector(std::vector<int64_t>{3, 1, 4, 1, 5}, {1, 5});
  const Tensor other = from_vector(std::vector<int64_t>{9, 2, 6, 1, 5}, {1, 5});  // the same last two tokens
  const Tensor a = raw::contiguous(raw::narrow(model.forward(ids), 1, 3, 2));
  const Tensor b = raw::contiguous(raw::narrow(model.forward(other), 1, 3, 2));
  CHECK(a.to_vector<float>() == b.to_vector<float>());
}

TEST_CASE("gradcheck (float64): the bigram's and an attention-only GPT's loss") {
  const Tensor ids = random_ids({2, 4}, 11, 5), targets = random_ids({2, 4}, 11, 6);
  SUBCASE("bigram") {
    GPT model(bigram(), 7, DType::Float64);
    const std::vector<Tensor> inputs{named(model, "wte.weight"), named(model, "ln_f.bias"), named(model, "lm_head.weight")};
    const GradcheckResult result = gradcheck([&](const std::vector<Tensor>&) { return model.loss(ids, targets); }, inputs);
    INFO(result.report);
    CHECK(result.ok);
  }
  SUBCASE("attention only") {
    GPT model(attention_only(1), 8, DType::Float64);
    const std::vector<Tensor> inputs{named(model, "wte.weight"), named(model, "blocks.0.attn.qkv.weight"),
                                     named(model, "blocks.0.attn.c_proj.bias"), named(model, "wpe.weight")};
    const GradcheckResult result = gradcheck([&](const std::vector<Tensor>&) { return model.loss(ids, targets); }, inputs);
    INFO(result.report);
    CHECK(result.ok);
  }
}

TEST_CASE("the course's models decode, cached and batched, to the full forward's logits") {
  for (const GPTConfig& config : {bigram(), attention_only()}) {
    INFO(config.n_layer, " layers");
    GPT model(config, 9);
    model.eval();
    const Tensor ids = random_ids({1, 6}, 11, 10);
    const std::vector<float> full = raw::contiguous(model.forward(ids)).to_vector<float>();
    const std::vector<float> cached = cached_logits(model, ids);
    REQUIRE(cached.size() == full.size());
    for (size_t i = 0; i < full.size(); ++i) CHECK(cached[i] == doctest::Approx(full[i]).epsilon(1e-5));
    // Two sequences in one decode_batch step, after prompts of different lengths.
    std::vector<nn::KVCache> first = model.make_caches(1, 6), second = model.make_caches(1, 6);
    model.forward_cached(raw::narrow(ids, 1, 0, 2), first);
    model.forward_cached(raw::narrow(ids, 1, 0, 4), second);
    const std::vector<float> batched =
        model.decode_batch({ids.to_vector<int64_t>()[2], ids.to_vector<int64_t>()[4]}, {&first, &second})
            .to_vector<float>();
    for (int64_t v = 0; v < 11; ++v) {
      CHECK(batched[v] == doctest::Approx(full[2 * 11 + v]).epsilon(1e-5));
      CHECK(batched[11 + v] == doctest::Approx(full[4 * 11 + v]).epsilon(1e-5));
    }
  }
}

TEST_CASE("the course's configs survive a checkpoint's JSON; what cannot work is refused") {
  for (const GPTConfig& config : {bigram(), attention_only()}) {
    const GPTConfig read = GPTConfig::from_json(config.to_json());
    CHECK(read.n_layer == config.n_layer);
    CHECK(read.mlp == config.mlp);
    CHECK(read.parameter_count() == config.parameter_count());
  }
  GPTConfig learned = bigram();
  learned.positional = PositionalEncoding::Learned;  // 0 layers: nothing would read the positions
  CHECK_THROWS_WITH_AS(learned.validate(), doctest::Contains("bigram model"), Error);
  GPTConfig sized = attention_only();
  sized.mlp_hidden = 32;
  CHECK_THROWS_WITH_AS(sized.validate(), doctest::Contains("mlp is none"), Error);
  nn::TransformerOptions options = sized.transformer_options();
  options.mlp_hidden = 0;
  CHECK_THROWS_WITH_AS(nn::MLP(options, nullptr), doctest::Contains("mlp is none"), Error);
}
