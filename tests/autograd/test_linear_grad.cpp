// Gradients of linear_product (x @ W^T + b, autograd/linear_op.h): numeric
// checks, agreement with matmul(x, transpose(W)) + b, the weight's gradient
// added straight into an existing buffer, and the same numbers on one thread
// and on two (where the backward's two products run at once).
#include <doctest/doctest.h>
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <tuple>
#include <vector>

#include "tests/bfloat16_rounding.h"
#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tests/autograd/gradcheck_helpers.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using tg::testing::rounded_to_bfloat16;
using namespace tg::testing;

namespace {

float max_abs_difference(const Tensor& a, const Tensor& b) {
  const std::vector<float> left = a.to_vector<float>(), right = b.to_vector<float>();
  float difference = 0;
  for (size_t i = 0; i < left.size(); ++i) difference = std::max(difference, std::abs(left[i] - right[i]));
  return difference;
}

}  // namespace

TEST_CASE("linear_product backward matches central differences (float64)") {
  Generator generator(3);
  for (const auto& [rows, in, out] : {std::tuple{1, 3, 2}, std::tuple{5, 4, 7}, std::tuple{6, 1, 1}}) {
    CAPTURE(rows);
    const Tensor x = leaf(randn({rows, in}, generator, DType::Float64));
    const Tensor weight = leaf(randn({out, in}, generator, DType::Float64));
    const GradcheckResult result = gradcheck([](auto& v) { return linear_product(v[0], v[1]); }, {x, weight});
    INFO(result.report);
    CHECK(result.ok);
  }
}

TEST_CASE("linear_product with a bias: central differences (float64), one row (gemv) and many (GEMM)") {
  Generator generator(13);
  for (const auto& [rows, in, out] : {std::tuple{1, 3, 2}, std::tuple{5, 4, 7}, std::tuple{9, 6, 1}}) {
    CAPTURE(rows);
    const Tensor x = leaf(randn({rows, in}, generator, DType::Float64));
    const Tensor weight = leaf(randn({out, in}, generator, DType::Float64));
    const Tensor bias = leaf(randn({out}, generator, DType::Float64));
    const GradcheckResult result =
        gradcheck([](auto& v) { return linear_product(v[0], v[1], v[2]); }, {x, weight, bias});
    INFO(result.report);
    CHECK(result.ok);
  }
}

TEST_CASE("linear_product with a bias: the numbers of matmul(x, transpose(W)) + b, forward and backward") {
  Generator generator(14);
  for (const auto& [rows, in, out] : {std::tuple{1, 8, 5}, std::tuple{37, 20, 11}, std::tuple{200, 64, 48}}) {
    CAPTURE(rows);
    const Tensor x = randn({rows, in}, generator), weight = randn({out, in}, generator);
    const Tensor bias = randn({out}, generator), dy = randn({rows, out}, generator);
    Tensor outputs[2], grads[2][3];
    for (int way = 0; way < 2; ++way) {
      const Tensor x_leaf = leaf(raw::clone(x)), weight_leaf = leaf(raw::clone(weight)), bias_leaf = leaf(raw::clone(bias));
      outputs[way] = way == 0 ? linear_product(x_leaf, weight_leaf, bias_leaf)
                              : add(matmul(x_leaf, transpose(weight_leaf, 0, 1)), bias_leaf);
      backward(outputs[way], dy);
      grads[way][0] = x_leaf.grad();
      grads[way][1] = weight_leaf.grad();
      grads[way][2] = bias_leaf.grad();
    }
    // Sums of up to 64 products of unit-sized terms, up to about 30 in size,
    // added in another order (the bias first here): a few float32 ulps apart.
    CHECK(max_abs_difference(outputs[0], outputs[1]) < 3e-5);
    for (int input = 0; input < 3; ++input) CHECK(max_abs_difference(grads[0][input], grads[1][input]) < 1e-4);
  }
  const Tensor weight = randn({3, 5}, generator);
  CHECK_THROWS_WITH_AS(linear_product(zeros({2, 5}), weight, zeros({4})),
                       doctest::Contains("a float32 bias of shape (4,) does not fit a float32 weight of shape (3, 5) (it needs shape (3,)"), Error);
  CHECK_THROWS_WITH_AS(linear_product(zeros({2, 5}), weight, zeros({3}, DType::Float64)),
                       doctest::Contains("a float64 bias of shape (3,) does not fit a float32 weight"), Error);
}

TEST_CASE("linear_product with a frozen bias (float32 and bfloat16): dx and dW as with a trained one, no bias gradient") {
  // A bias that does not require grad (LoRA, partial fine-tuning) made the backward return two
  // gradients for three inputs, which the tape refused.
  Generator generator(15);
  const Tensor x = randn({37, 20}, generator), weight = randn({11, 20}, generator), bias = randn({11}, generator);
  const Tensor dy = randn({37, 11}, generator);
  for (const DType products : {DType::Float32, DType::BFloat16}) {
    CAPTURE(dtype_name(products));
    Tensor grads[2][2];
    for (const bool frozen : {true, false}) {
      const Tensor x_leaf = leaf(raw::clone(x)), weight_leaf = leaf(raw::clone(weight));
      const Tensor bias_leaf = frozen ? raw::clone(bias) : leaf(raw::clone(bias));
      backward(linear_product(x_leaf, weight_leaf, bias_leaf, "test", products), dy);
      grads[frozen][0] = x_leaf.grad();
      grads[frozen][1] = weight_leaf.grad();
      if (frozen) CHECK_FALSE(bias_leaf.grad().defined());
    }
    for (int input = 0; input < 2; ++input) CHECK(max_abs_difference(grads[0][input], grads[1][input]) == 0);
  }
}

TEST_CASE("linear_product: the same numbers on one thread and on two, where the forward splits its rows and dx and dW are made at once") {
  Generator generator(15);
  // 601 rows: enough for the forward to give each of two threads its own
  // product, and an odd count so that the two runs of rows differ in length.
  const Tensor x = randn({601, 40}, generator), weight = randn({56, 40}, generator);
  const Tensor bias = randn({56}, generator), dy = randn({601, 56}, generator);
  const int threads_before = omp_get_max_threads();
  std::vector<float> results[2][4];
  for (int threads = 1; threads <= 2; ++threads) {
    omp_set_num_threads(threads);
    const Tensor x_leaf = leaf(raw::clone(x)), weight_leaf = leaf(raw::clone(weight)), bias_leaf = leaf(raw::clone(bias));
    const Tensor y = linear_product(x_leaf, weight_leaf, bias_leaf);
    backward(y, dy);
    results[threads - 1][0] = y.to_vector<float>();
    results[threads - 1][1] = x_leaf.grad().to_vector<float>();
    results[threads - 1][2] = weight_leaf.grad().to_vector<float>();
    results[threads - 1][3] = bias_leaf.grad().to_vector<float>();
  }
  omp_set_num_threads(threads_before);
  // Bit for bit on any OpenBLAS kernels: the forward splits its product one
  // way for every thread count where the kernels' sums would depend on it
  // (ctest runs this case with OpenBLAS's Haswell kernels too), and the
  // backward's products are single-threaded calls on one thread and on two.
  for (int part = 0; part < 4; ++part) {
    CAPTURE(part);
    CHECK(results[0][part] == results[1][part]);
  }
}

TEST_CASE("linear_product: the numbers of matmul(x, transpose(W)), strided input, empty batch") {
  Generator generator(4);
  const Tensor x_wide = randn({6, 10}, generator);
  const Tensor x = raw::narrow(x_wide, 1, 2, 5);  // (6, 5), rows 10 apart
  const Tensor weight = randn({3, 5}, generator);
  const Tensor dy = randn({6, 3}, generator);
  Tensor grads[2][2];
  for (int way = 0; way < 2; ++way) {
    const Tensor x_leaf = leaf(raw::contiguous(x)), weight_leaf = leaf(raw::clone(weight));
    const Tensor y = way == 0 ? linear_product(x_leaf, weight_leaf) : matmul(x_leaf, transpose(weight_leaf, 0, 1));
    backward(y, dy);
    grads[way][0] = x_leaf.grad();
    grads[way][1] = weight_leaf.grad();
  }
  for (int input = 0; input < 2; ++input)
    CHECK(max_abs_difference(grads[0][input], grads[1][input]) < 1e-5);
  const Tensor none = leaf(zeros({0, 5}));
  CHECK(linear_product(none, leaf(raw::clone(weight))).shape() == Shape{0, 3});
  CHECK_THROWS_WITH_AS(linear_product(zeros({2, 4}), weight),
                       doctest::Contains("input of shape (2, 4) and weight of shape (3, 5)"), Error);
}

TEST_CASE("linear_product adds the weight's gradient into its existing buffer, which accumulates") {
  Generator generator(5);
  const Tensor x = randn({4, 3}, generator);
  const Tensor weight = leaf(randn({2, 3}, generator));
  const Tensor dy = randn({4, 2}, generator);
  backward(linear_product(x, weight), dy);  // first backward: a fresh buffer
  const Tensor buffer = weight.grad();
  const std::vector<float> once = buffer.to_vector<float>();
  backward(linear_product(x, weight), dy);  // second: added into that same buffer
  CHECK(weight.grad().data<float>() == buffer.data<float>());
  const std::vector<float> twice = weight.grad().to_vector<float>();
  for (size_t i = 0; i < once.size(); ++i) CHECK(twice[i] == doctest::Approx(2 * once[i]).epsilon(1e-6));
}

TEST_CASE("linear_product in bfloat16: the float32 products of the rounded x, W and dy, in every direction") {
  Generator generator(7);
  for (const auto& [rows, in, out] : {std::tuple{1, 3, 2}, std::tuple{7, 33, 5}, std::tuple{64, 100, 70}}) {
    CAPTURE(rows);
    const Tensor x = randn({rows, in}, generator), weight = randn({out, in}, generator), dy = randn({rows, out}, generator);
    const Tensor x_leaf = leaf(x), weight_leaf = leaf(weight);
    const Tensor y = linear_product(x_leaf, weight_leaf, nullptr, DType::BFloat16);
    backward(y, dy);
    // The same products in float32 on the rounded operands.
    const Tensor x_rounded = leaf(rounded_to_bfloat16(x)), weight_rounded = leaf(rounded_to_bfloat16(weight));
    const Tensor expected = linear_product(x_rounded, weight_rounded);
    backward(expected, rounded_to_bfloat16(dy));
    const auto tolerance = [&](int64_t terms) { return 1e-5f * std::sqrt(static_cast<float>(terms)) * 8; };
    CHECK(max_abs_difference(y, expected) <= tolerance(in));
    CHECK(max_abs_difference(x_leaf.grad(), x_rounded.grad()) <= tolerance(out));
    CHECK(max_abs_difference(weight_leaf.grad(), weight_rounded.grad()) <= tolerance(rows));
    // and within bfloat16's precision of the exact float32 product
    const Tensor exact = linear_product(x, weight);
    const float scale = std::sqrt(static_cast<float>(in));
    CHECK(max_abs_difference(y, exact) <= 0.02f * scale);
    CHECK(max_abs_difference(y, exact) > 0);  // the rounding happened
  }
}

TEST_CASE("linear_product in bfloat16 with a bias: the bias added in float32, its gradient the rows' sum of dy") {
  Generator generator(16);
  const Tensor x = randn({9, 32}, generator), weight = randn({6, 32}, generator);
  const Tensor bias = randn({6}, generator), dy = randn({9, 6}, generator);
  const Tensor bias_leaf = leaf(raw::clone(bias));
  const Tensor y = linear_product(x, weight, bias_leaf, nullptr, DType::BFloat16);
  backward(y, dy);
  const Tensor without_bias = linear_product(x, weight, nullptr, DType::BFloat16);
  CHECK(max_abs_difference(y, raw::add(without_bias, bias)) <= 1e-5f);
  CHECK(max_abs_difference(bias_leaf.grad(), raw::sum(dy, {0})) <= 1e-6f);
}

TEST_CASE("linear_product in bfloat16: the weight's gradient added into its buffer; float64 refused") {
  Generator generator(8);
  const Tensor x = randn({5, 32}, generator), weight = randn({6, 32}, generator), dy = randn({5, 6}, generator);
  const Tensor fresh = leaf(raw::clone(weight));
  backward(linear_product(x, fresh, nullptr, DType::BFloat16), dy);
  const Tensor accumulated = leaf(raw::clone(weight));
  backward(linear_product(x, accumulated, nullptr, DType::BFloat16), dy);
  backward(linear_product(x, accumulated, nullptr, DType::BFloat16), dy);  // adds onto the first
  CHECK(max_abs_difference(accumulated.grad(), raw::mul(fresh.grad(), 2.0)) <= 1e-5f);
  const Tensor x64 = randn({2, 3}, generator, DType::Float64), w64 = randn({4, 3}, generator, DType::Float64);
  CHECK_THROWS_WITH_AS(linear_product(x64, w64, nullptr, DType::BFloat16),
                       doctest::Contains("products in bfloat16 take float32 operands, got float64"), Error);
}
