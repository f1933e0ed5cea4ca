// The tape: accumulation, reuse, no-grad, detach, release, memory.
#include <doctest/doctest.h>

#include "tinygpt/autograd/ops.h"
#include <cmath>

#include "tinygpt/autograd/node.h"

using namespace tg;

namespace {
Tensor leaf(std::vector<float> values, Shape shape) {
  Tensor x = from_vector<float>(values, shape);
  x.set_requires_grad();
  return x;
}
}  // namespace

TEST_CASE("small exact gradients") {
  // y = sum(x * x + 3x): dy/dx = 2x + 3
  Tensor x = leaf({1, 2, 3}, {3});
  backward(sum(x * x + 3.0 * x));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{5, 7, 9});
}

TEST_CASE("reshape of ones with an output gradient of twos gives twos") {
  Tensor x = leaf({1, 1, 1, 1, 1, 1}, {2, 3});
  Tensor y = reshape(x, {3, 2});
  backward(y, full({3, 2}, 2));
  CHECK(x.grad().shape() == Shape{2, 3});
  CHECK(x.grad().to_vector<float>() == std::vector<float>(6, 2.0f));
}

TEST_CASE("a tensor used twice gets both contributions") {
  Tensor x = leaf({3}, {1});
  Tensor y = x * x;  // both operands are x
  backward(sum(y + x));
  CHECK(x.grad().item<float>() == 7);  // 2x + 1
}

TEST_CASE("gradients accumulate across backward calls until zero_grad") {
  Tensor x = leaf({1, 2}, {2});
  backward(sum(x * 2.0));
  backward(sum(x * 2.0));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{4, 4});
  zero_grad({x});
  CHECK_FALSE(x.grad().defined());
  backward(sum(x));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1, 1});
}

TEST_CASE("a diamond graph: every path is summed exactly once") {
  Tensor x = leaf({2}, {1});
  Tensor a = exp(x);
  Tensor b = a * 2.0;
  Tensor c = a * 3.0;
  backward(sum(b + c));  // d/dx 5 e^x = 5 e^x
  CHECK(x.grad().item<float>() == doctest::Approx(5 * std::exp(2.0f)));
}

TEST_CASE("no-grad scope records nothing; guards nest") {
  Tensor x = leaf({1, 2}, {2});
  {
    NoGradGuard guard;
    Tensor y = x * 2.0;
    CHECK_FALSE(y.requires_grad());
    {
      NoGradGuard inner;
      CHECK_FALSE(is_grad_enabled());
    }
    CHECK_FALSE(is_grad_enabled());
  }
  CHECK(is_grad_enabled());
  CHECK((x * 2.0).requires_grad());
}

TEST_CASE("detach cuts the graph") {
  Tensor x = leaf({2}, {1});
  Tensor y = x * x;
  Tensor z = y.detach() * x;  // only the direct use of x counts
  backward(sum(z));
  CHECK(x.grad().item<float>() == 4);
}

TEST_CASE("gradients of views flow to their base") {
  Tensor x = leaf({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor column = select(transpose(x, 0, 1), 0, 1);  // x[:, 1]
  backward(sum(column * from_vector<float>({10, 20})));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0, 10, 0, 0, 20, 0});
}

TEST_CASE("backward on a non-scalar needs its gradient; errors are clear") {
  Tensor x = leaf({1, 2}, {2});
  Tensor y = x * 2.0;
  CHECK_THROWS_WITH_AS(backward(y), doctest::Contains("is not a scalar"), Error);
  CHECK_THROWS_WITH_AS(backward(y, ones({3})), doctest::Contains("gradient of shape (3,) for an output of shape (2,)"),
                       Error);
  CHECK_THROWS_WITH_AS(backward(ones({1})), doctest::Contains("does not require grad"), Error);
}

TEST_CASE("the tape is released after backward unless kept") {
  Tensor x = leaf({1, 2}, {2});
  Tensor loss = sum(exp(x));
  backward(loss, {}, /*keep_graph=*/true);
  backward(loss);  // allowed: the first kept it
  CHECK(x.grad().to_vector<float>()[0] == doctest::Approx(2 * std::exp(1.0f)));
  CHECK_THROWS_WITH_AS(backward(loss), doctest::Contains("already released"), Error);
}

TEST_CASE("memory does not grow across training steps") {
  Tensor w = leaf({0.5f, -0.5f, 0.25f}, {3});
  const int64_t before = Node::live_count();
  for (int step = 0; step < 50; ++step) {
    Tensor loss = sum(tanh(w * w + w));
    backward(loss);
  }
  CHECK(Node::live_count() == before);  // every node died with its step's loss
  // A forward without backward (an evaluation that forgot no_grad) also frees its graph.
  { Tensor unused = sum(exp(w)); }
  CHECK(Node::live_count() == before);
}

TEST_CASE("ops on tensors without grad record nothing") {
  Tensor x = from_vector<float>({1, 2});
  Tensor y = exp(x) + x;
  CHECK_FALSE(y.requires_grad());
  CHECK(y.is_leaf());
}

TEST_CASE("only leaves can be rebound to a buffer: a computed tensor's node saved its place") {
  Tensor x = ones({2});
  x.set_requires_grad();
  Tensor y = mul(x, x);
  CHECK_THROWS_WITH_AS(y.rebind_to(zeros({4}), 0), doctest::Contains("only a leaf can move"), Error);
  CHECK_THROWS_WITH_AS(y.attach_grad_fn(y.grad_fn()), doctest::Contains("already belongs to a graph"), Error);
}

TEST_CASE("backward_observed: each node's whole gradient, as a cut of the graph there would receive it") {
  // h = x * w (used twice), z = sum(h * h + 3 h): dz/dh = 2h + 3 at h's node, summed over both uses.
  Tensor x = leaf({1, -2, 0.5f}, {3});
  Tensor w = leaf({2, 3, -1}, {3});
  Tensor h = x * w;
  Tensor z = sum(h * h + 3.0 * h);
  std::vector<float> at_h;
  int observed = 0;
  backward_observed(z, Tensor(), [&](const Node& node, const Tensor& grad) {
    ++observed;
    if (&node == h.grad_fn().get()) at_h = grad.to_vector<float>();
  });
  CHECK(at_h == std::vector<float>{2 * 2 + 3, 2 * -6 + 3, 2 * -0.5f + 3});
  CHECK(observed >= 4);  // sum, add, the two products, ...
  CHECK(x.grad().to_vector<float>() == std::vector<float>{7 * 2, -9 * 3, 2 * -1});  // leaves as backward() gives

  // The same gradient reaches a leaf that starts a cut graph at h.
  Tensor cut = leaf({2, -6, -0.5f}, {3});
  backward(sum(cut * cut + 3.0 * cut));
  CHECK(cut.grad().to_vector<float>() == at_h);
}
