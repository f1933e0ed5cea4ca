// Elementwise kernels: broadcasting, layouts, dtypes, errors.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>

#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

TEST_CASE("binary ops broadcast like NumPy") {
  Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor row = from_vector<float>({10, 20, 30});
  Tensor column = from_vector<float>({100, 200}, {2, 1});
  CHECK(raw::add(a, row).to_vector<float>() == std::vector<float>{11, 22, 33, 14, 25, 36});
  CHECK(raw::add(a, column).to_vector<float>() == std::vector<float>{101, 102, 103, 204, 205, 206});
  CHECK(raw::mul(row, column).shape() == Shape{2, 3});
  CHECK(raw::sub(a, scalar(1)).to_vector<float>() == std::vector<float>{0, 1, 2, 3, 4, 5});
  CHECK(raw::div(a, scalar(2)).to_vector<float>() == std::vector<float>{0.5f, 1, 1.5f, 2, 2.5f, 3});
  CHECK(raw::rsub(1.0, a).to_vector<float>() == std::vector<float>{0, -1, -2, -3, -4, -5});
  CHECK(raw::pow(a, 2.0).to_vector<float>() == std::vector<float>{1, 4, 9, 16, 25, 36});
  CHECK(raw::maximum(a, scalar(3.5)).to_vector<float>() == std::vector<float>{3.5f, 3.5f, 3.5f, 4, 5, 6});
}

TEST_CASE("strided operands give the same result as contiguous copies") {
  Generator generator(1);
  Tensor a = randn({5, 7}, generator);
  Tensor b = randn({7, 5}, generator);
  Tensor bt = raw::transpose(b, 0, 1);
  CHECK(raw::mul(a, bt).to_vector<float>() == raw::mul(a, raw::contiguous(bt)).to_vector<float>());
  Tensor stepped = raw::slice(a, 1, 0, 7, 2);
  CHECK(raw::exp(stepped).to_vector<float>() == raw::exp(raw::contiguous(stepped)).to_vector<float>());
}

TEST_CASE("unary ops match the C library") {
  Tensor x = from_vector<double>({0.25, 1.0, 2.5});
  auto expected = [](double (*fn)(double)) { return std::vector<double>{fn(0.25), fn(1.0), fn(2.5)}; };
  CHECK(raw::exp(x).to_vector<double>() == expected(std::exp));
  CHECK(raw::log(x).to_vector<double>() == expected(std::log));
  CHECK(raw::sqrt(x).to_vector<double>() == expected(std::sqrt));
  CHECK(raw::tanh(x).to_vector<double>() == expected(std::tanh));
  CHECK(raw::neg(x).to_vector<double>() == std::vector<double>{-0.25, -1.0, -2.5});
  CHECK(raw::sign(from_vector<float>({-2, 0, 3})).to_vector<float>() == std::vector<float>{-1, 0, 1});
}

TEST_CASE("comparisons, where and masked_fill") {
  Tensor a = from_vector<float>({1, 5, 3});
  Tensor b = from_vector<float>({2, 5, 1});
  CHECK(raw::lt(a, b).to_vector<bool>() == std::vector<bool>{true, false, false});
  CHECK(raw::eq(a, b).to_vector<bool>() == std::vector<bool>{false, true, false});
  CHECK(raw::ge(a, b).to_vector<bool>() == std::vector<bool>{false, true, true});
  CHECK(raw::where(raw::gt(a, b), a, b).to_vector<float>() == std::vector<float>{2, 5, 3});
  Tensor mask = from_vector<bool>({true, false, true});
  CHECK(raw::masked_fill(a, mask, -1).to_vector<float>() == std::vector<float>{-1, 5, -1});
  // A causal mask broadcast over a batch.
  Tensor scores = zeros({2, 2, 2});
  Tensor upper = from_vector<bool>({false, true, false, false}, {2, 2});
  CHECK(raw::masked_fill(scores, upper, -INFINITY).to_vector<float>()[1] == -INFINITY);
}

TEST_CASE("int64 arithmetic, and floating-only ops refuse integers") {
  Tensor ids = arange(4);
  CHECK(raw::add(ids, ids).to_vector<int64_t>() == std::vector<int64_t>{0, 2, 4, 6});
  CHECK_THROWS_WITH_AS(raw::exp(ids), doctest::Contains("exp: needs a floating-point tensor, got int64"), Error);
}

TEST_CASE("misuse names the op, the shapes and the dtypes") {
  CHECK_THROWS_WITH_AS(raw::add(zeros({2, 3}), zeros({4})),
                       doctest::Contains("add: shapes (2, 3) and (4,) cannot be broadcast together"), Error);
  CHECK_THROWS_WITH_AS(raw::mul(zeros({2}), zeros({2}, DType::Float64)),
                       doctest::Contains("mul: dtypes float32 and float64 differ"), Error);
  CHECK_THROWS_WITH_AS(raw::where(zeros({2}), zeros({2}), zeros({2})), doctest::Contains("condition must be bool"), Error);
  CHECK_THROWS_WITH_AS(raw::masked_fill(zeros({2}), from_vector<bool>({true, false, true}), 0),
                       doctest::Contains("masked_fill"), Error);
  CHECK_THROWS_WITH_AS(raw::add_(zeros({2}), zeros({3, 2})), doctest::Contains("does not broadcast to the destination"),
                       Error);
}

TEST_CASE("in-place add and scale") {
  Tensor x = ones({2, 3});
  raw::add_(x, from_vector<float>({1, 2, 3}));
  CHECK(x.to_vector<float>() == std::vector<float>{2, 3, 4, 2, 3, 4});
  raw::mul_(raw::select(x, 0, 1), 10);
  CHECK(x.to_vector<float>() == std::vector<float>{2, 3, 4, 20, 30, 40});
}

TEST_CASE("large kernels give the same bits with 1 and 2 threads") {
  Generator generator(3);
  Tensor a = randn({300, 257}, generator);  // above the parallel threshold
  Tensor b = randn({257}, generator);
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const auto one = raw::exp(raw::add(a, b)).to_vector<float>();
  omp_set_num_threads(2);
  const auto two = raw::exp(raw::add(a, b)).to_vector<float>();
  omp_set_num_threads(threads);
  CHECK(one == two);
}

TEST_CASE("an integer tensor and a fractional scalar: refused, not truncated (2.5 became 2)") {
  const Tensor ids = from_vector(std::vector<int64_t>{1, 2, 3}, {3});
  CHECK_THROWS_WITH_AS(raw::mul(ids, 2.5), doctest::Contains("mul: the scalar 2.5 is not a whole number"), Error);
  CHECK_THROWS_WITH_AS(raw::add(ids, 0.5), doctest::Contains("add: the scalar 0.5"), Error);
  CHECK_THROWS_WITH_AS(raw::gt(ids, 1.5), doctest::Contains("gt: the scalar 1.5"), Error);
  CHECK(raw::mul(ids, 2.0).to_vector<int64_t>() == std::vector<int64_t>{2, 4, 6});  // a whole number still works
  CHECK(raw::mul(raw::to_dtype(ids, DType::Float32), 2.5).to_vector<float>() == std::vector<float>{2.5f, 5.0f, 7.5f});
}
