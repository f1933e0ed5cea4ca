// GPT::set_activation_checkpointing: the same loss, the same gradient of every
// parameter and the same dropout generator state as the plain path, to the bit,
// with dropout on and for every positional encoding; gradient accumulation over
// two backward calls; eval and no-grad forwards untouched.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tests/models/tiny_gpt_config.h"

using namespace tg;

namespace {

constexpr uint64_t kModelSeed = 31;

GPTConfig tiny_with_dropout(PositionalEncoding kind) {
  GPTConfig config = testing::tiny_gpt_config({.vocab_size = 11, .positional = kind});
  config.dropout = 0.2;
  return config;
}

Tensor random_ids(const Shape& shape, uint64_t seed) {
  Generator generator(seed);
  return randint(shape, 0, 11, generator);
}

// What one run of backward calls leaves behind, to compare the two paths.
struct StepOutcome {
  std::vector<double> losses;
  std::map<std::string, std::vector<float>> gradients;  // by parameter name
  uint64_t dropout_seed = 0, dropout_counter = 0;
};

// A fresh model in training mode (its gradients in a ParameterArena, as in
// training), then one forward and backward per batch seed, accumulating.
StepOutcome run_steps(const GPTConfig& config, bool checkpointing, const std::vector<uint64_t>& batch_seeds) {
  GPT model(config, kModelSeed);
  nn::ParameterArena arena(model);
  model.set_activation_checkpointing(checkpointing);
  StepOutcome outcome;
  for (uint64_t seed : batch_seeds) {
    const Tensor loss = model.loss(random_ids({2, 8}, seed), random_ids({2, 8}, seed + 100));
    outcome.losses.push_back(loss.item<double>());
    backward(loss);
  }
  for (const auto& [name, parameter] : arena.named_parameters())
    outcome.gradients[name] = parameter.grad().to_vector<float>();
  outcome.dropout_seed = model.dropout_generator().seed();
  outcome.dropout_counter = model.dropout_generator().counter();
  return outcome;
}

void check_same(const StepOutcome& checkpointed, const StepOutcome& plain) {
  CHECK(checkpointed.losses == plain.losses);
  REQUIRE(checkpointed.gradients.size() == plain.gradients.size());
  for (const auto& [name, gradient] : plain.gradients) {
    INFO(name);
    CHECK(checkpointed.gradients.at(name) == gradient);
  }
  CHECK(checkpointed.dropout_seed == plain.dropout_seed);
  CHECK(checkpointed.dropout_counter == plain.dropout_counter);
}

}  // namespace

TEST_CASE("activation checkpointing: loss, every gradient and the dropout state equal the plain path's exactly") {
  for (PositionalEncoding kind :
       {PositionalEncoding::Learned, PositionalEncoding::Sinusoidal, PositionalEncoding::Rope}) {
    INFO(positional_encoding_name(kind));
    const GPTConfig config = tiny_with_dropout(kind);
    const StepOutcome plain = run_steps(config, false, {1});
    check_same(run_steps(config, true, {1}), plain);
    CHECK(plain.dropout_counter > 0);  // dropout did draw masks
  }
}

TEST_CASE("activation checkpointing: gradients accumulate over two backward calls") {
  const GPTConfig config = tiny_with_dropout(PositionalEncoding::Rope);
  const StepOutcome accumulated = run_steps(config, true, {2, 3});
  check_same(accumulated, run_steps(config, false, {2, 3}));
  // The second call added to the first, rather than overwriting it.
  const StepOutcome first = run_steps(config, true, {2});
  const std::vector<float>& both = accumulated.gradients.at("blocks.0.attn.qkv.weight");
  CHECK(both != first.gradients.at("blocks.0.attn.qkv.weight"));
}

TEST_CASE("activation checkpointing: the forward keeps one node per block instead of the block's graph") {
  GPT model(tiny_with_dropout(PositionalEncoding::Learned), kModelSeed);
  const Tensor ids = random_ids({2, 8}, 4), targets = random_ids({2, 8}, 5);
  auto nodes_alive_after = [before = Node::live_count()] { return Node::live_count() - before; };
  int64_t block_nodes = 0, plain_nodes = 0;
  {
    Generator generator(6);
    const Tensor x = randn({2, 8, model.config().n_embd}, generator).set_requires_grad();
    const Tensor y = model.block(0).forward(x);
    block_nodes = nodes_alive_after();
  }
  {
    const Tensor loss = model.loss(ids, targets);
    plain_nodes = nodes_alive_after();
  }
  model.set_activation_checkpointing(true);
  const Tensor loss = model.loss(ids, targets);
  CHECK(block_nodes > 1);
  CHECK(nodes_alive_after() == plain_nodes - model.config().n_layer * (block_nodes - 1));
}

TEST_CASE("activation checkpointing: eval and no-grad forwards are unchanged") {
  GPT model(tiny_with_dropout(PositionalEncoding::Learned), kModelSeed);
  model.eval();
  const Tensor ids = random_ids({2, 8}, 6);
  const std::vector<float> plain = model.forward(ids).to_vector<float>();
  model.set_activation_checkpointing(true);
  CHECK(model.forward(ids).to_vector<float>() == plain);
  NoGradGuard no_grad;
  const Tensor logits = model.forward(ids);
  CHECK(logits.to_vector<float>() == plain);
  CHECK_FALSE(logits.requires_grad());
}
