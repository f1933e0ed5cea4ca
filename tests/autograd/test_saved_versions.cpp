// An in-place write into a tensor an op saved for its backward is refused when
// backward runs, naming the op and the tensor, as PyTorch's version counters do
// (autograd/node.h); writes that no backward reads stay allowed.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using doctest::Contains;

namespace {
Tensor leaf(const std::vector<float>& values) {
  Tensor x = from_vector(values, {static_cast<int64_t>(values.size())});
  x.set_requires_grad();
  return x;
}
}  // namespace

TEST_CASE("saved versions: exp's output changed in place is refused (it gave dx = 3 e^x)") {
  const Tensor x = leaf({0.5f, -1.0f});
  const Tensor y = exp(x);
  raw::mul_(y, 3.0);
  CHECK_THROWS_WITH_AS(backward(sum(y)), Contains("backward of 'exp': its output of shape (2,), which 'exp' saved "
                                                   "for its gradient, was changed in place after it ran"), Error);
}

TEST_CASE("saved versions: fill_ on a mul input between forward and backward is refused (it gave db = [10, 10])") {
  const Tensor a = from_vector(std::vector<float>{1, 2}, {2});
  const Tensor b = leaf({3.0f, 4.0f});
  const Tensor c = mul(a, b);
  fill_(a, 10.0);
  CHECK_THROWS_WITH_AS(backward(sum(c)), Contains("backward of 'mul': its input 0 of shape (2,)"), Error);
}

TEST_CASE("saved versions: a leaf that requires grad, written after an op saved it, is refused") {
  const Tensor w = leaf({1.0f, 2.0f});
  fill_(w, 0.5);  // before any op: initialisation, as under torch.no_grad()
  const Tensor loss = sum(mul(w, w));
  fill_(w, 7.0);
  CHECK_THROWS_WITH_AS(backward(loss), Contains("backward of 'mul': its input 0"), Error);
}

TEST_CASE("saved versions: a write through a view of a saved tensor is seen (views share the count)") {
  const Tensor x = leaf({1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor y = tanh(x);
  raw::add_(raw::slice(y, 0, 2, 4), ones({2}));
  CHECK_THROWS_WITH_AS(backward(sum(y)), Contains("backward of 'tanh': its output of shape (4,)"), Error);
  // copy_ into a saved input, through a reshape of it
  const Tensor z = leaf({1.0f, 2.0f, 3.0f, 4.0f});
  const Tensor indices = from_vector(std::vector<int64_t>{3, 0}, {2});
  const Tensor picked = index_select(z, 0, indices);
  raw::copy_(raw::reshape(indices, {2}), from_vector(std::vector<int64_t>{1, 1}, {2}));
  CHECK_THROWS_WITH_AS(backward(sum(picked)), Contains("backward of 'index_select': its input 1 of shape (2,)"), Error);
}

TEST_CASE("saved versions: writes no backward reads are allowed, and a clone may be changed freely") {
  const Tensor x = leaf({1.0f, 2.0f});
  const Tensor a = from_vector(std::vector<float>{5, 6}, {2});
  const Tensor y = add(x, a);  // add saves neither input
  fill_(a, 0.0);
  backward(sum(y));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{1, 1});

  const Tensor u = leaf({0.0f, 1.0f});
  const Tensor e = exp(u);
  const Tensor changed = raw::clone(e);
  raw::mul_(changed, 3.0);
  backward(sum(e));
  CHECK(u.grad().to_vector<float>()[1] == doctest::Approx(std::exp(1.0)).epsilon(1e-6));
}

TEST_CASE("saved versions: a kept graph is checked again on its second backward") {
  const Tensor x = leaf({2.0f});
  const Tensor y = mul(x, x);
  backward(y, Tensor(), /*keep_graph=*/true);
  CHECK(x.grad().to_vector<float>()[0] == 4.0f);
  raw::mul_(x, 0.5);
  CHECK_THROWS_WITH_AS(backward(y), Contains("backward of 'mul'"), Error);
}
