// Mixed-precision training (GPT::set_matmul_dtype(BFloat16), autograd/linear_op.h):
// the loss and gradients within bfloat16's rounding of float32's, training that
// follows float32's path, and the settings it refuses.
#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/optim/adamw.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/tiny_gpt_config.h"

using namespace tg;

namespace {

struct Batch {
  Tensor inputs, targets;  // (B, T)
};

Batch fixed_batch(int64_t vocab_size) {
  Generator generator(11);
  const Tensor ids = randint({4, 17}, 0, vocab_size, generator);
  return {raw::contiguous(raw::narrow(ids, 1, 0, 16)), raw::contiguous(raw::narrow(ids, 1, 1, 16))};
}

// The losses of `steps` AdamW steps on one batch, the products in `matmul_dtype`.
std::vector<double> train_losses(DType matmul_dtype, int64_t steps) {
  const GPTConfig config = testing::tiny_gpt_config({.vocab_size = 30, .n_embd = 64, .n_head = 4, .block_size = 16});
  GPT model(config, 5);
  model.set_matmul_dtype(matmul_dtype);
  nn::ParameterArena arena(model);
  nn::AdamWOptions options;
  options.lr = 3e-3;
  nn::AdamW optimizer(arena, options);
  const Batch batch = fixed_batch(config.vocab_size);
  std::vector<double> losses;
  for (int64_t step = 0; step < steps; ++step) {
    arena.zero_grad();
    const Tensor loss = model.loss(batch.inputs, batch.targets);
    losses.push_back(loss.item<double>());
    backward(loss);
    optimizer.step();
  }
  return losses;
}

}  // namespace

TEST_CASE("mixed precision: the loss within bfloat16's rounding of float32's, and training follows it") {
  const std::vector<double> full = train_losses(DType::Float32, 40), mixed = train_losses(DType::BFloat16, 40);
  CHECK(mixed[0] != full[0]);                                     // the products were rounded
  CHECK(mixed[0] == doctest::Approx(full[0]).epsilon(2e-3));      // by bfloat16's 8 bits, averaged
  CHECK(mixed.back() < 0.5 * mixed.front());                      // it learns the batch
  CHECK(mixed.back() == doctest::Approx(full.back()).epsilon(0.05));  // as far as float32 does
}

TEST_CASE("mixed precision: the gradients within bfloat16's rounding of float32's") {
  const GPTConfig config = testing::tiny_gpt_config({.vocab_size = 30, .n_embd = 64, .n_head = 4, .block_size = 16});
  const Batch batch = fixed_batch(config.vocab_size);
  std::vector<std::vector<float>> gradients[2];
  for (int mixed = 0; mixed < 2; ++mixed) {
    GPT model(config, 5);
    model.set_matmul_dtype(mixed ? DType::BFloat16 : DType::Float32);
    CHECK(model.matmul_dtype() == (mixed ? DType::BFloat16 : DType::Float32));
    backward(model.loss(batch.inputs, batch.targets));
    for (const Tensor& parameter : model.parameters()) gradients[mixed].push_back(parameter.grad().to_vector<float>());
  }
  for (size_t index = 0; index < gradients[0].size(); ++index) {
    double difference = 0, size = 0;
    for (size_t element = 0; element < gradients[0][index].size(); ++element) {
      difference += std::pow(gradients[1][index][element] - gradients[0][index][element], 2);
      size += std::pow(gradients[0][index][element], 2);
    }
    CAPTURE(index);
    CHECK(std::sqrt(difference / size) < 0.03);  // relative RMS: a few bfloat16 steps (2^-8 each)
  }
}

TEST_CASE("mixed precision: a float32 model only") {
  const GPTConfig config = testing::tiny_gpt_config({.vocab_size = 30});
  GPT float64_model(config, 1, DType::Float64);
  CHECK_THROWS_WITH_AS(float64_model.set_matmul_dtype(DType::BFloat16),
                       doctest::Contains("the weights are float64; mixed precision trains a float32 model"), Error);
  GPT quantized(config, 1);
  quantized.quantize(DType::Int8);
  CHECK_THROWS_WITH_AS(quantized.set_matmul_dtype(DType::BFloat16),
                       doctest::Contains("the weights are int8; mixed precision trains a float32 model"), Error);
  GPT model(config, 1);
  CHECK_THROWS_WITH_AS(model.set_matmul_dtype(DType::Int8), doctest::Contains("float32 or bfloat16, not int8"), Error);
}
