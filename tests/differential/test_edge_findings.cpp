// What the differential test against PyTorch 1.13 found at the edges (issue 33): each case
// behaves as PyTorch does, or is refused where PyTorch refuses it, with the op named.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/functional/rope.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using doctest::Contains;

TEST_CASE("edges: in-place writes into an expanded view are refused (20,000 additions landed in one float)") {
  const Tensor one = zeros({1});
  const Tensor expanded = raw::expand(one, {20000});
  CHECK_THROWS_WITH_AS(raw::add_(expanded, ones({20000})), Contains("add_: the destination of shape (20000,) is an "
                                                                     "expanded view (stride 0 along dim 0)"), Error);
  CHECK_THROWS_WITH_AS(raw::copy_(expanded, ones({20000})), Contains("copy_: the destination"), Error);
  CHECK_THROWS_WITH_AS(raw::mul_(expanded, 2.0), Contains("mul_: the destination"), Error);
  CHECK(one.to_vector<float>()[0] == 0.0f);  // untouched
  raw::add_(raw::expand(one, {1}), ones({1}));  // size 1 along the dim: one element, one place
  CHECK(one.to_vector<float>()[0] == 1.0f);
}

TEST_CASE("edges: copy_ of a shape that does not fit names copy_, not expand") {
  CHECK_THROWS_WITH_AS(raw::copy_(zeros({2, 3}), ones({4})), Contains("copy_:"), Error);
  CHECK_THROWS_WITH_AS(raw::copy_(zeros({3}), ones({2, 3})), Contains("copy_: a source of shape (2, 3) does not "
                                                                      "broadcast to the destination's shape (3,)"), Error);
}

TEST_CASE("edges: embedding backward with C = 0 gives an empty gradient (it threw a reshape error)") {
  Tensor table = zeros({5, 0});
  table.set_requires_grad();
  const Tensor rows = embedding(table, from_vector(std::vector<int64_t>{1, 4, 1}, {3}));  // (3, 0)
  backward(sum(rows) + sum(table));
  CHECK(table.grad().shape() == Shape{5, 0});
}

TEST_CASE("edges: a 0-d tensor names dim 0 once in a reduction, as a 1-d one must") {
  const Tensor scalar = full({}, 3.0);
  CHECK(raw::sum(scalar, {0}).to_vector<float>()[0] == 3.0f);
  CHECK_THROWS_WITH_AS(raw::sum(scalar, {0, 0}), Contains("appears more than once"), Error);
  CHECK_THROWS_WITH_AS(raw::sum(scalar, {0, -1}), Contains("appears more than once"), Error);
}

TEST_CASE("edges: rope's last position must be an int64 (past INT64_MAX the sum overflowed)") {
  const Tensor x = zeros({1, 1, 4, 2});
  CHECK_THROWS_WITH_AS(nn::rope(x, std::numeric_limits<int64_t>::max() - 2), Contains("runs past the largest position"),
                       Error);
  CHECK_NOTHROW(nn::rope(x, 1000));
}

TEST_CASE("edges: cross_entropy_reference with no class and every target ignored is NaN, as the fused op") {
  Tensor logits = zeros({2, 0});
  logits.set_requires_grad();
  const Tensor targets = from_vector(std::vector<int64_t>{-100, -100}, {2});
  const Tensor loss = nn::cross_entropy_reference(logits, targets, -100);
  CHECK(std::isnan(loss.to_vector<float>()[0]));
  CHECK(std::isnan(nn::cross_entropy(logits, targets, -100).to_vector<float>()[0]));
  backward(loss);
  CHECK(logits.grad().shape() == Shape{2, 0});
}
