// activation_checkpoint: numeric gradients, equality with the plain path to the
// bit, the generator rewind, nesting (backward inside backward) and what is kept.
#include <doctest/doctest.h>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tests/autograd/gradcheck_helpers.h"

using namespace tg;
using namespace tg::testing;

namespace {

// x (N, K), weight (K, K) -> (N, K): a product, a nonlinearity and a second use of x.
Tensor layer(const Tensor& x, const Tensor& weight) { return tanh(matmul(x, weight)) * x; }

// x times fresh uniform noise from `generator`: a stand-in for dropout.
Tensor noisy(const Tensor& x, Generator& generator) { return x * rand(x.shape(), generator, x.dtype()); }

Tensor float_leaf(const Shape& shape, uint64_t seed) { return leaf(raw::to_dtype(values(shape, seed), DType::Float32)); }

}  // namespace

TEST_CASE("activation_checkpoint gradcheck: the input and a weight the function reads") {
  const Tensor x = input({3, 4}, 1), weight = input({4, 4}, 2, -1, 1);
  check_gradients(
      [](const std::vector<Tensor>& inputs) {
        const Tensor weight = inputs[1];
        return activation_checkpoint([weight](const Tensor& x) { return layer(x, weight); }, inputs[0]);
      },
      {x, weight});
}

TEST_CASE("activation_checkpoint gradcheck: nested, so backward runs inside backward") {
  const Tensor x = input({3, 4}, 3), weight = input({4, 4}, 4, -1, 1);
  check_gradients(
      [](const std::vector<Tensor>& inputs) {
        const Tensor weight = inputs[1];
        const CheckpointedFunction inner = [weight](const Tensor& x) { return layer(x, weight); };
        const CheckpointedFunction outer = [weight, inner](const Tensor& x) {
          return layer(activation_checkpoint(inner, x), weight);
        };
        return activation_checkpoint(outer, inputs[0]);
      },
      {x, weight});
}

TEST_CASE("activation_checkpoint: output and gradients equal the plain path's exactly") {
  Tensor weight = float_leaf({4, 4}, 5);
  const Tensor x_plain = float_leaf({3, 4}, 6), x_checkpointed = float_leaf({3, 4}, 6);
  const Tensor plain = layer(x_plain, weight);
  backward(sum(plain));
  const std::vector<float> weight_grad_plain = weight.grad().to_vector<float>();
  // The weight's gradient is a view of a larger buffer (as in a ParameterArena): it must land there.
  const Tensor buffer = zeros({20});
  weight.set_grad(raw::view(raw::narrow(buffer, 0, 2, 16), {4, 4}));
  const Tensor checkpointed =
      activation_checkpoint([weight](const Tensor& x) { return layer(x, weight); }, x_checkpointed);
  CHECK(checkpointed.grad_fn()->op == "activation_checkpoint");
  CHECK(checkpointed.to_vector<float>() == plain.to_vector<float>());
  backward(sum(checkpointed));
  CHECK(x_checkpointed.grad().to_vector<float>() == x_plain.grad().to_vector<float>());
  const std::vector<float> landed = raw::narrow(buffer, 0, 2, 16).to_vector<float>();
  CHECK(landed == weight_grad_plain);
  CHECK(buffer.to_vector<float>()[0] == 0);
  CHECK(buffer.to_vector<float>()[19] == 0);
}

TEST_CASE("activation_checkpoint: the forward keeps one node instead of the function's graph") {
  const Tensor weight = float_leaf({4, 4}, 7), x = float_leaf({3, 4}, 8);
  const int64_t before = Node::live_count();
  {
    const Tensor plain = layer(x, weight);
    CHECK(Node::live_count() - before == 3);  // matmul, tanh, mul
  }
  const Tensor checkpointed = activation_checkpoint([weight](const Tensor& x) { return layer(x, weight); }, x);
  CHECK(Node::live_count() - before == 1);
}

TEST_CASE("activation_checkpoint: the generator is rewound for the recompute, then restored") {
  const Tensor x_plain = float_leaf({2, 5}, 9), x_checkpointed = float_leaf({2, 5}, 9), x_unhooked = float_leaf({2, 5}, 9);
  Generator plain_generator(42);
  const Tensor plain = noisy(x_plain, plain_generator);
  backward(sum(plain));

  auto generator = std::make_shared<Generator>(42);
  const Tensor checkpointed =
      activation_checkpoint([generator](const Tensor& x) { return noisy(x, *generator); }, x_checkpointed, generator);
  CHECK(checkpointed.to_vector<float>() == plain.to_vector<float>());
  const uint64_t counter_after_forward = generator->counter();
  backward(sum(checkpointed));
  CHECK(x_checkpointed.grad().to_vector<float>() == x_plain.grad().to_vector<float>());  // the same noise
  CHECK(generator->counter() == counter_after_forward);
  CHECK(generator->counter() == plain_generator.counter());

  // Without the generator, the recompute draws the next values: other noise, a wrong gradient.
  auto unhooked = std::make_shared<Generator>(42);
  const Tensor wrong = activation_checkpoint([unhooked](const Tensor& x) { return noisy(x, *unhooked); }, x_unhooked);
  backward(sum(wrong));
  CHECK(x_unhooked.grad().to_vector<float>() != x_plain.grad().to_vector<float>());
}

TEST_CASE("activation_checkpoint: a kept graph recomputes again, and gradients accumulate") {
  const Tensor weight = float_leaf({4, 4}, 10), x = float_leaf({3, 4}, 11);
  const Tensor once = float_leaf({3, 4}, 11);
  backward(sum(layer(once, weight)));
  const Tensor loss = sum(activation_checkpoint([weight](const Tensor& x) { return layer(x, weight); }, x));
  backward(loss, {}, /*keep_graph=*/true);
  backward(loss);
  const std::vector<float> single = once.grad().to_vector<float>(), twice = x.grad().to_vector<float>();
  for (size_t i = 0; i < single.size(); ++i) CHECK(twice[i] == 2 * single[i]);
}

TEST_CASE("activation_checkpoint: without grad, or with an input that needs none, the function runs as it is") {
  const Tensor weight = float_leaf({4, 4}, 12);
  const CheckpointedFunction function = [weight](const Tensor& x) { return layer(x, weight); };
  {
    NoGradGuard no_grad;
    CHECK_FALSE(activation_checkpoint(function, float_leaf({3, 4}, 13)).requires_grad());
  }
  // Nothing to save memory for, but the weight still gets its gradient from the ordinary tape.
  const Tensor output = activation_checkpoint(function, raw::to_dtype(values({3, 4}, 14), DType::Float32));
  CHECK(output.grad_fn()->op != "activation_checkpoint");
  backward(sum(output));
  CHECK(weight.grad().defined());
}

TEST_CASE("activation_checkpoint: a missing function is named in the error") {
  CHECK_THROWS_WITH_AS(activation_checkpoint(CheckpointedFunction(), float_leaf({3, 4}, 15)),
                       doctest::Contains("activation_checkpoint: no function given (input of shape (3, 4))"), Error);
}
