#include <doctest/doctest.h>

#include <cmath>
#include <string>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

// The textbook triple loop over broadcast batches, in double: the reference
// every BLAS path is compared with. a (..., M, K), b (..., K, N).
std::vector<double> naive_matmul(const Tensor& a, const Tensor& b, Shape& out_shape) {
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  const Shape batch = broadcast_shapes(Shape(a.shape().begin(), a.shape().end() - 2),
                                       Shape(b.shape().begin(), b.shape().end() - 2), "naive_matmul");
  Shape a_shape = batch, b_shape = batch;
  a_shape.insert(a_shape.end(), {m, k});
  b_shape.insert(b_shape.end(), {k, n});
  out_shape = batch;
  out_shape.insert(out_shape.end(), {m, n});
  const std::vector<double> av = raw::expand(a, a_shape).to_vector<double>();
  const std::vector<double> bv = raw::expand(b, b_shape).to_vector<double>();
  std::vector<double> out(static_cast<size_t>(numel(out_shape)), 0.0);
  for (int64_t batch_index = 0; batch_index < numel(batch); ++batch_index)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double total = 0;
        for (int64_t p = 0; p < k; ++p) total += av[(batch_index * m + i) * k + p] * bv[(batch_index * k + p) * n + j];
        out[(batch_index * m + i) * n + j] = total;
      }
  return out;
}

void check_against_naive(const Tensor& a, const Tensor& b, double tolerance = 1e-5) {
  Shape expected_shape;
  const std::vector<double> expected = naive_matmul(a, b, expected_shape);
  const Tensor c = raw::matmul(a, b);
  REQUIRE(c.shape() == expected_shape);
  const std::vector<double> actual = c.to_vector<double>();
  for (size_t i = 0; i < expected.size(); ++i)
    REQUIRE(actual[i] == doctest::Approx(expected[i]).epsilon(tolerance).scale(1.0));
}

}  // namespace

TEST_CASE("matmul: a 2x3 times 3x2 product checked by hand") {
  const Tensor a = from_vector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  const Tensor b = from_vector<float>({7, 8, 9, 10, 11, 12}, {3, 2});
  const Tensor c = raw::matmul(a, b);
  CHECK(c.shape() == Shape{2, 2});
  CHECK(c.dtype() == DType::Float32);
  // [1*7 + 2*9 + 3*11, 1*8 + 2*10 + 3*12] = [58, 64]; [139, 154] likewise.
  CHECK(c.to_vector<float>() == std::vector<float>{58, 64, 139, 154});
}

TEST_CASE("matmul: float64 uses dgemm and keeps double precision") {
  const Tensor a = from_vector<double>({1.0 / 3, 2.0 / 3}, {1, 2});
  const Tensor b = from_vector<double>({3, 3}, {2, 1});
  const Tensor c = raw::matmul(a, b);
  CHECK(c.dtype() == DType::Float64);
  CHECK(std::abs(c.item<double>() - 3.0) < 1e-15);
}

TEST_CASE("matmul: transposed operands match the naive loop") {
  Generator generator(1);
  const Tensor a_stored = randn({5, 4}, generator);  // used as (4, 5)
  const Tensor b_stored = randn({6, 5}, generator);  // used as (5, 6)
  const Tensor a = raw::transpose(a_stored, 0, 1), b = raw::transpose(b_stored, 0, 1);
  check_against_naive(a, b);
  check_against_naive(a, raw::contiguous(b));
  check_against_naive(raw::contiguous(a), b);
  // A @ B^T with B stored (N, K): the layout of attention scores and tied embeddings.
  check_against_naive(randn({3, 5}, generator), raw::transpose(randn({7, 5}, generator), 0, 1));
}

TEST_CASE("matmul: sliced operands (row slices keep their stride, stepped columns are copied)") {
  Generator generator(2);
  const Tensor wide = randn({6, 10}, generator);
  check_against_naive(raw::slice(wide, 1, 2, 7), randn({5, 3}, generator));   // rows of 5 inside rows of 10
  check_against_naive(raw::slice(wide, 1, 0, 10, 2), randn({5, 4}, generator));  // every other column
  check_against_naive(randn({3, 6}, generator), raw::slice(wide, 0, 0, 6, 1));
  check_against_naive(raw::slice(wide, 0, 1, 6, 2), randn({10, 2}, generator));  // every other row
}

TEST_CASE("matmul: batched and broadcast batch dims") {
  Generator generator(3);
  check_against_naive(randn({2, 3, 4, 5}, generator), randn({2, 3, 5, 6}, generator));
  check_against_naive(randn({2, 1, 4, 5}, generator), randn({3, 5, 6}, generator));  // -> (2, 3, 4, 6)
  check_against_naive(randn({2, 3, 4, 5}, generator), randn({5, 6}, generator));     // one weight for all
  check_against_naive(randn({4, 5}, generator), randn({2, 3, 5, 6}, generator));
  check_against_naive(randn({3, 1, 5}, generator), randn({3, 5, 2}, generator));     // M == 1
  // Non-contiguous batches: heads split out of a (B, T, H, D) tensor, as attention does.
  const Tensor q = raw::permute(randn({2, 4, 3, 5}, generator), {0, 2, 1, 3});  // (2, 3, 4, 5)
  const Tensor k = raw::permute(randn({2, 6, 3, 5}, generator), {0, 2, 3, 1});  // (2, 3, 5, 6)
  check_against_naive(q, k);
  check_against_naive(raw::transpose(randn({2, 3, 5, 4}, generator), -1, -2), randn({1, 3, 5, 2}, generator));
}

TEST_CASE("matmul: 1-D operands as in torch.matmul") {
  const Tensor v = from_vector<float>({1, 2, 3});
  const Tensor w = from_vector<float>({4, 5, 6});
  const Tensor m = from_vector<float>({1, 0, 0, 1, 1, 1}, {3, 2});
  const Tensor dot = raw::matmul(v, w);
  CHECK(dot.dim() == 0);
  CHECK(dot.item<float>() == 32);  // 4 + 10 + 18
  const Tensor row = raw::matmul(v, m);
  CHECK(row.shape() == Shape{2});
  CHECK(row.to_vector<float>() == std::vector<float>{4, 5});
  const Tensor column = raw::matmul(raw::transpose(m, 0, 1), v);
  CHECK(column.shape() == Shape{2});
  CHECK(column.to_vector<float>() == std::vector<float>{4, 5});
  const Tensor batched = raw::matmul(raw::expand(m, {4, 3, 2}), from_vector<float>({1, 1}));
  CHECK(batched.shape() == Shape{4, 3});
  CHECK(batched.to_vector<float>()[2] == 2);
  // A stepped 1-D vector goes to BLAS with its stride as the leading dim.
  const Tensor stepped = raw::slice(from_vector<float>({1, 9, 2, 9, 3, 9}), 0, 0, 6, 2);
  CHECK(raw::matmul(stepped, w).item<float>() == 32);
  CHECK(raw::matmul(stepped, m).to_vector<float>() == std::vector<float>{4, 5});
}

TEST_CASE("matmul: empty operands") {
  const Tensor no_inner = raw::matmul(zeros({2, 0}), zeros({0, 3}));
  CHECK(no_inner.shape() == Shape{2, 3});
  CHECK(no_inner.to_vector<float>() == std::vector<float>(6, 0.0f));  // an empty sum is 0
  CHECK(raw::matmul(zeros({0, 4}), zeros({4, 3})).shape() == Shape{0, 3});
  CHECK(raw::matmul(zeros({0, 2, 4}), zeros({4, 3})).shape() == Shape{0, 2, 3});
}

TEST_CASE("matmul: errors name both shapes") {
  CHECK_THROWS_WITH_AS(raw::matmul(zeros({2, 3}), zeros({4, 5})),
                       "matmul: shapes (2, 3) and (4, 5) cannot be multiplied (3 != 4)", Error);
  CHECK_THROWS_WITH_AS(raw::matmul(zeros({3}), zeros({4})), doctest::Contains("shapes (3,) and (4,)"), Error);
  CHECK_THROWS_WITH_AS(raw::matmul(zeros({2, 2, 3}), zeros({3, 3, 4})),
                       doctest::Contains("matmul: batch dims of shapes (2, 2, 3) and (3, 3, 4)"), Error);
  CHECK_THROWS_WITH_AS(raw::matmul(zeros({2, 3}), zeros({3, 2}, DType::Float64)),
                       doctest::Contains("matmul: dtypes differ: float32 (2, 3) and float64 (3, 2)"), Error);
  CHECK_THROWS_WITH_AS(raw::matmul(scalar(1), zeros({3})), doctest::Contains("at least 1 dim"), Error);
  CHECK_THROWS_WITH_AS(raw::matmul(zeros({2, 2}, DType::Int64), zeros({2, 2}, DType::Int64)),
                       doctest::Contains("matmul: needs a floating-point tensor"), Error);
}

TEST_CASE("threads: one knob for OpenMP and OpenBLAS") {
  const int before = num_threads();
  set_num_threads(1);
  CHECK(num_threads() == 1);
  CHECK(thread_info().find("1 OpenMP thread; OpenBLAS") == 0);
  CHECK(thread_info().find("(OpenMP build), 1 thread") != std::string::npos);
  set_num_threads(before);
  CHECK(num_threads() == before);
  CHECK_THROWS_WITH_AS(set_num_threads(0), doctest::Contains("set_num_threads: need at least 1 thread, got 0"), Error);
}
