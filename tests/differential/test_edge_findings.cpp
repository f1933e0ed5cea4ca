// What the differential test against PyTorch 1.13 found at the edges (issue 33): each case
// behaves as PyTorch does, or is refused where PyTorch refuses it, with the op named.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/nn/functional/rope.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/random.h"
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

TEST_CASE("edges: cross_entropy's gradient keeps its precision at large logits (the row [M, M, 0], target 2)") {
  // softmax = [1/2, 1/2, 0] at every M: logsumexp = M + log 2 rounds to M once log 2 is
  // below M's last digit (1e8 in float32, 1e16 in double), and the gradient became 1.
  for (const DType dtype : {DType::Float32, DType::Float64}) {
    for (const double m : {1e4, 1e6, 1e8, 1e16, 1e30}) {
      CAPTURE(m);
      Tensor logits = to_dtype(from_vector(std::vector<double>{m, m, 0.0}, {1, 3}), dtype);
      logits.set_requires_grad();
      const Tensor loss = nn::cross_entropy(logits, from_vector(std::vector<int64_t>{2}, {1}), -100);
      CHECK(loss.to_vector<double>()[0] == doctest::Approx(m + std::log(2.0)).epsilon(dtype == DType::Float32 ? 1e-7 : 1e-15));
      backward(loss);
      const std::vector<double> dlogits = logits.grad().to_vector<double>();
      CHECK(dlogits[0] == 0.5);
      CHECK(dlogits[1] == 0.5);
      CHECK(dlogits[2] == -1.0);
    }
  }
}

TEST_CASE("edges: cross_entropy at a large offset agrees with the offset-free row (it lost 1e-4 relative at 1e4)") {
  // Adding a constant to a row changes neither its softmax nor its loss. Offsets that are
  // exact in float32 keep logits - max exact, so the gradient must match to float rounding.
  const Tensor base = from_vector(std::vector<float>{0.25f, -1.5f, 2.0f, 0.75f, -0.125f, 1.0f}, {2, 3});
  const Tensor targets = from_vector(std::vector<int64_t>{1, 2}, {2});
  auto gradient = [&](float offset) {
    Tensor logits = raw::add(base, static_cast<double>(offset));
    logits.set_requires_grad();
    backward(nn::cross_entropy(logits, targets, -100));
    return logits.grad().to_vector<float>();
  };
  const std::vector<float> plain = gradient(0.0f), shifted = gradient(16384.0f);
  for (size_t i = 0; i < plain.size(); ++i) CHECK(shifted[i] == doctest::Approx(plain[i]).epsilon(1e-6));
}

TEST_CASE("edges: layer_norm with one channel has dx exactly 0 (an FMA left -0.026 in the release build)") {
  // y = bias whatever x is, so dx = 0; dweight = dy * xhat = 0 and dbias = dy.
  Generator generator(21);
  Tensor x = randn({64, 1}, generator), weight = randn({1}, generator), bias = randn({1}, generator);
  for (Tensor* t : {&x, &weight, &bias}) t->set_requires_grad();
  const Tensor dy = randn({64, 1}, generator);
  backward(sum(nn::layer_norm(x, weight, bias) * dy));
  for (const float value : x.grad().to_vector<float>()) CHECK(value == 0.0f);
  CHECK(weight.grad().to_vector<float>()[0] == 0.0f);
  CHECK(bias.grad().to_vector<float>()[0] == doctest::Approx(raw::sum(dy).to_vector<float>()[0]).epsilon(1e-6));
}

TEST_CASE("edges: layer_norm of a row whose variance overflows float32 is still normalised (it gave the bias)") {
  // x = s * [1, -1, 3, -3]: mean 0, var = 5 s^2 = 5e60 (past FLT_MAX); xhat = [1, -1, 3, -3] / sqrt(5).
  const double s = 1e30;
  Tensor x = from_vector(std::vector<float>{1e30f, -1e30f, 3e30f, -3e30f}, {1, 4});
  x.set_requires_grad();
  const Tensor weight = ones({4}), bias = zeros({4});
  const Tensor y = nn::layer_norm(x, weight, bias);
  const std::vector<float> values = y.to_vector<float>();
  const double expected[] = {1 / std::sqrt(5.0), -1 / std::sqrt(5.0), 3 / std::sqrt(5.0), -3 / std::sqrt(5.0)};
  for (int c = 0; c < 4; ++c) CHECK(values[c] == doctest::Approx(expected[c]).epsilon(1e-6));
  // dx of sum(y * [1, 0, 0, 0]): (1/std) (e0 - 1/4 - xhat_0 xhat) with std = sqrt(5) s.
  backward(sum(y * from_vector(std::vector<float>{1, 0, 0, 0}, {1, 4})));
  const std::vector<float> dx = x.grad().to_vector<float>();
  for (int c = 0; c < 4; ++c) {
    const double exact = ((c == 0 ? 1.0 : 0.0) - 0.25 - expected[0] * expected[c]) / (std::sqrt(5.0) * s);
    CHECK(dx[c] == doctest::Approx(exact).epsilon(1e-5));
  }
  // float64 overflows past 1e154 the same way.
  const Tensor wide = nn::layer_norm(to_dtype(from_vector(std::vector<double>{1e200, -1e200}, {1, 2}), DType::Float64),
                                     to_dtype(ones({2}), DType::Float64), to_dtype(zeros({2}), DType::Float64));
  CHECK(wide.to_vector<double>()[0] == doctest::Approx(1.0).epsilon(1e-12));
}

TEST_CASE("edges: an int64 tensor with a fractional scalar is refused by the operators too (they truncated it)") {
  const Tensor ids = from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  for (const double scalar : {2.5, 0.5, -1.25}) {
    CHECK_THROWS_WITH_AS(ids * scalar, Contains("mul: the scalar"), Error);
    CHECK_THROWS_WITH_AS(scalar * ids, Contains("is not a whole number"), Error);
    CHECK_THROWS_WITH_AS(ids + scalar, Contains("add: the scalar"), Error);
    CHECK_THROWS_WITH_AS(ids - scalar, Contains("sub: the scalar"), Error);
  }
  CHECK((ids * 2.0).to_vector<int64_t>() == std::vector<int64_t>{2, 4, 6});  // a whole number stays exact
}
