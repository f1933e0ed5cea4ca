// Reductions: exact small cases, every loop (rows, columns, general) against a
// plain reference on many layouts, thread-count independence, failure paths.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

Tensor matrix_1234() { return from_vector<float>({1, 2, 3, 4}, {2, 2}); }

// Reference: sum over `dims` (empty = all) by visiting every element of x in
// row-major order, in long double, keepdim = true.
std::vector<double> reference_sum(const Tensor& x, std::vector<int64_t> dims) {
  const int64_t ndim = x.dim();
  std::vector<bool> reduced(ndim, dims.empty());
  for (int64_t d : dims) reduced[d < 0 ? d + ndim : d] = true;
  Shape out_shape = x.shape();
  for (int64_t d = 0; d < ndim; ++d)
    if (reduced[d]) out_shape[d] = 1;
  std::vector<long double> totals(numel(out_shape), 0.0L);
  const std::vector<double> values = x.to_vector<double>();
  std::vector<int64_t> index(ndim, 0);
  for (double value : values) {
    int64_t o = 0;
    for (int64_t d = 0; d < ndim; ++d) o = o * out_shape[d] + (reduced[d] ? 0 : index[d]);
    totals[o] += value;
    for (int64_t d = ndim - 1; d >= 0; --d) {
      if (++index[d] < x.shape()[d]) break;
      index[d] = 0;
    }
  }
  return {totals.begin(), totals.end()};
}

void check_close(const std::vector<double>& actual, const std::vector<double>& expected, double rtol) {
  REQUIRE(actual.size() == expected.size());
  for (size_t i = 0; i < actual.size(); ++i) CHECK(actual[i] == doctest::Approx(expected[i]).epsilon(rtol));
}

bool bitwise_equal(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to_vector<double>(), y = b.to_vector<double>();
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i)
    if (std::memcmp(&x[i], &y[i], sizeof(double)) != 0) return false;
  return true;
}

}  // namespace

TEST_CASE("sum of [[1, 2], [3, 4]] by hand") {
  const Tensor x = matrix_1234();
  CHECK(raw::sum(x, {0}).to_vector<float>() == std::vector<float>{4, 6});
  CHECK(raw::sum(x, {1}).to_vector<float>() == std::vector<float>{3, 7});
  CHECK(raw::sum(x, {-1}).to_vector<float>() == std::vector<float>{3, 7});
  CHECK(raw::sum(x).item<float>() == 10);
  CHECK(raw::sum(x, {0, 1}).item<float>() == 10);
  CHECK(raw::sum(x).shape() == Shape{});
  CHECK(raw::sum(x, {0}, true).shape() == Shape{1, 2});
  CHECK(raw::sum(x, {-1}, true).shape() == Shape{2, 1});
  CHECK(raw::sum(x, {}, true).shape() == Shape{1, 1});
  CHECK(raw::sum(x).dtype() == DType::Float32);
}

TEST_CASE("sum keeps int64 exact") {
  const Tensor x = from_vector<int64_t>({1, 2, 3, int64_t{1} << 60}, {2, 2});
  CHECK(raw::sum(x, {0}).to_vector<int64_t>() == std::vector<int64_t>{4, 2 + (int64_t{1} << 60)});
  CHECK(raw::sum(x).item<int64_t>() == 6 + (int64_t{1} << 60));
  CHECK(raw::sum(x).dtype() == DType::Int64);
}

TEST_CASE("sum of a 0-d tensor, and of empty tensors") {
  const Tensor five = scalar(5);
  CHECK(raw::sum(five).item<float>() == 5);
  CHECK(raw::sum(five, {0}).item<float>() == 5);
  CHECK(raw::sum(five, {-1}, true).shape() == Shape{});
  const Tensor empty = zeros({0, 3});
  CHECK(raw::sum(empty, {0}).to_vector<float>() == std::vector<float>{0, 0, 0});
  CHECK(raw::sum(empty, {1}).shape() == Shape{0});
  CHECK(raw::sum(empty).item<float>() == 0);
}

TEST_CASE("sum over several dims of a 3-d tensor") {
  const Tensor x = raw::view(arange(0, 24, 1, DType::Float64), {2, 3, 4});
  // element (i, j, k) = 12 i + 4 j + k
  CHECK(raw::sum(x, {0, 2}).to_vector<double>() == std::vector<double>{60, 92, 124});
  CHECK(raw::sum(x, {2, 0}).to_vector<double>() == std::vector<double>{60, 92, 124});
  CHECK(raw::sum(x, {-3, -1}, true).shape() == Shape{1, 3, 1});
  CHECK(raw::sum(x, {1}).to_vector<double>() == std::vector<double>{12, 15, 18, 21, 48, 51, 54, 57});
  CHECK(raw::sum(x, {0, 1}).to_vector<double>() == std::vector<double>{60, 66, 72, 78});
}

TEST_CASE("sum matches a reference on every layout and loop") {
  Generator generator(7);
  // Sizes above the block length (4096) exercise the blocked runs; sizes above
  // the column chunk (256) the chunked column loop; 150 x 2 rows of 40 the
  // column loop split by rows (at least two blocks of 64 rows).
  const std::vector<Shape> shapes = {{5, 7, 9}, {3, 2, 5000}, {2, 3, 300}, {4, 1, 6}, {1, 2, 9000}, {150, 2, 40}};
  for (const Shape& shape : shapes) {
    const Tensor base = randn(shape, generator, DType::Float64);
    const std::vector<Tensor> layouts = {
        base,
        raw::transpose(base, 0, -1),                      // columns become rows
        raw::slice(base, -1, 0, shape.back(), 2),          // stride-2 rows
        raw::expand(raw::slice(base, 0, 0, 1), shape),     // stride 0 on dim 0
        raw::permute(base, {1, 2, 0}),
    };
    for (const Tensor& x : layouts) {
      for (const std::vector<int64_t>& dims :
           std::vector<std::vector<int64_t>>{{}, {0}, {1}, {2}, {-1}, {0, 1}, {0, 2}, {1, 2}}) {
        CAPTURE(shape_str(x.shape()));
        CAPTURE(shape_str(x.strides()));
        CAPTURE(shape_str(Shape(dims)));
        check_close(raw::sum(x, dims, true).to_vector<double>(), reference_sum(x, dims), 1e-12);
      }
    }
  }
}

TEST_CASE("float32 sums accumulate in double") {
  // 2^24 + 1 + 1 + ... : a float accumulator would lose every 1.
  std::vector<float> values(1001, 1.0f);
  values[0] = 16777216.0f;
  const double exact = 16777216.0 + 1000;
  const Tensor column = from_vector<float>(values, {1001, 1});
  const Tensor two_columns = raw::clone(raw::expand(column, {1001, 2}));
  CHECK(raw::sum(column).item<double>() == exact);                                      // rows
  CHECK(raw::sum(two_columns, {0}).to_vector<double>() == std::vector<double>{exact, exact});  // columns
  CHECK(raw::sum(raw::transpose(two_columns, 0, 1)).item<double>() == 2 * exact);       // general
}

TEST_CASE("reductions do not depend on the thread count") {
  Generator generator(3);
  const Tensor rows = randn({64, 3000}, generator);    // many rows
  const Tensor long_rows = randn({2, 50000}, generator);  // few long rows, split into blocks
  const Tensor cube = randn({40, 30, 50}, generator);
  const Tensor activations = randn({64, 8, 768}, generator);  // (B, T, C): one row of outputs, split over threads
  const auto all_results = [&] {
    return std::vector<Tensor>{
        raw::sum(rows, {1}),          raw::sum(rows, {0}),     raw::sum(rows),
        raw::sum(long_rows, {1}),     raw::sum(long_rows),     raw::sum(cube, {0, 2}),
        raw::sum(raw::transpose(cube, 0, 2), {1}), raw::mean(cube, {1}), raw::var(cube, {0, 1}),
        raw::var(rows, {1}),          raw::max(cube, 1).values, raw::max(cube, 2).values,
        raw::sum_to_shape(activations, {768}), raw::max(activations, 0).indices,
        raw::mean(activations, {0, 1}), raw::var(activations, {0, 1}),
    };
  };
  const int previous = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<Tensor> one_thread = all_results();
  omp_set_num_threads(2);
  const std::vector<Tensor> two_threads = all_results();
  omp_set_num_threads(previous);
  for (size_t i = 0; i < one_thread.size(); ++i) {
    CAPTURE(i);
    CHECK(bitwise_equal(one_thread[i], two_threads[i]));
  }
}

TEST_CASE("mean by hand, and the empty mean is NaN") {
  const Tensor x = matrix_1234();
  CHECK(raw::mean(x).item<float>() == 2.5f);
  CHECK(raw::mean(x, {0}).to_vector<float>() == std::vector<float>{2, 3});
  CHECK(raw::mean(x, {1}, true).shape() == Shape{2, 1});
  CHECK(std::isnan(raw::mean(zeros({0})).item<float>()));
  CHECK_THROWS_WITH_AS(raw::mean(arange(4)), doctest::Contains("mean: needs a floating-point tensor, got int64"),
                       tg::Error);
}

TEST_CASE("var by hand: unbiased by default, biased on request") {
  const Tensor x = from_vector<double>({1, 2, 3, 4});
  CHECK(raw::var(x).item<double>() == doctest::Approx(5.0 / 3));
  CHECK(raw::var(x, {}, false).item<double>() == 1.25);
  const Tensor m = from_vector<float>({1, 2, 3, 4, 6, 8}, {2, 3});
  CHECK(raw::var(m, {1}).to_vector<float>() == std::vector<float>{1, 4});
  CHECK(raw::var(m, {0}, true, true).shape() == Shape{1, 3});
  CHECK(raw::var(m, {0}).to_vector<float>() == std::vector<float>{4.5f, 8, 12.5f});
}

TEST_CASE("var is stable when the mean dwarfs the spread") {
  // E[x^2] - E[x]^2 would cancel to garbage here; two passes give exactly 1.
  CHECK(raw::var(from_vector<double>({1e9 + 1, 1e9 + 2, 1e9 + 3})).item<double>() == 1);
  CHECK(raw::var(from_vector<float>({10001, 10002, 10003})).item<float>() == 1);
}

TEST_CASE("var without degrees of freedom is NaN, as in PyTorch") {
  CHECK(std::isnan(raw::var(from_vector<double>({3})).item<double>()));
  CHECK(raw::var(from_vector<double>({3}), {}, false).item<double>() == 0);
  CHECK(std::isnan(raw::var(zeros({0})).item<float>()));
}

TEST_CASE("max along a dim: values, first index on ties, keepdim") {
  const Tensor x = from_vector<float>({1, 5, 5, 7, 2, 7}, {2, 3});
  raw::MaxResult by_row = raw::max(x, 1);
  CHECK(by_row.values.to_vector<float>() == std::vector<float>{5, 7});
  CHECK(by_row.indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(by_row.indices.dtype() == DType::Int64);
  raw::MaxResult by_column = raw::max(x, 0);
  CHECK(by_column.values.to_vector<float>() == std::vector<float>{7, 5, 7});
  CHECK(by_column.indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 1});
  CHECK(raw::max(x, -1, true).values.shape() == Shape{2, 1});
  CHECK(raw::max(x, 0, true).indices.shape() == Shape{1, 3});
  CHECK(raw::argmax(x, 1).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(raw::argmax(raw::transpose(x, 0, 1), 0).to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  CHECK(raw::max(x).item<float>() == 7);
  CHECK(raw::max(x).shape() == Shape{});
  CHECK(raw::max(from_vector<int64_t>({3, -1, 9, 9}), 0).indices.item<int64_t>() == 2);
}

TEST_CASE("max: NaN is the max, as in PyTorch") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = from_vector<float>({1, nan, 3, nan, 0, -1}, {2, 3});
  raw::MaxResult by_row = raw::max(x, 1);
  CHECK(std::isnan(by_row.values.to_vector<float>()[0]));
  CHECK(std::isnan(by_row.values.to_vector<float>()[1]));
  CHECK(by_row.indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0});
  raw::MaxResult by_column = raw::max(x, 0);  // the column loop
  CHECK(by_column.indices.to_vector<int64_t>() == std::vector<int64_t>{1, 0, 0});
  CHECK(std::isnan(by_column.values.to_vector<float>()[0]));
  CHECK(by_column.values.to_vector<float>()[2] == 3);
  CHECK(std::isnan(raw::max(x).item<float>()));
}

TEST_CASE("max matches a reference on non-contiguous layouts") {
  Generator generator(11);
  const Tensor base = randn({6, 5, 300}, generator, DType::Float64);
  for (const Tensor& x : {base, raw::transpose(base, 0, 2), raw::slice(base, 2, 1, 300, 3)}) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      const raw::MaxResult result = raw::max(x, dim, true);
      // Every value equals x at its index, and no element along the line is larger.
      const Tensor at_index = raw::expand(result.values, x.shape());
      const std::vector<double> values = x.to_vector<double>(), maxima = at_index.to_vector<double>();
      for (size_t i = 0; i < values.size(); ++i) REQUIRE(values[i] <= maxima[i]);
      const std::vector<int64_t> indices = result.indices.to_vector<int64_t>();
      const std::vector<double> chosen = result.values.to_vector<double>();
      for (size_t o = 0; o < indices.size(); ++o) {
        std::vector<int64_t> position(3);
        int64_t rest = static_cast<int64_t>(o);
        for (int64_t d = 2; d >= 0; --d) {
          const int64_t size = result.values.shape()[d];
          position[d] = rest % size;
          rest /= size;
        }
        position[dim] = indices[o];
        int64_t offset = 0;
        for (int64_t d = 0; d < 3; ++d) offset += position[d] * x.strides()[d];
        REQUIRE(x.data<double>()[offset] == chosen[o]);
      }
    }
  }
}

TEST_CASE("sum_to_shape un-broadcasts") {
  const Tensor x = ones({2, 3, 4});
  CHECK(raw::sum_to_shape(x, {4}).to_vector<float>() == std::vector<float>(4, 6));
  CHECK(raw::sum_to_shape(x, {3, 1}).to_vector<float>() == std::vector<float>(3, 8));
  CHECK(raw::sum_to_shape(x, {3, 1}).shape() == Shape{3, 1});
  CHECK(raw::sum_to_shape(x, {1, 3, 4}).to_vector<float>() == std::vector<float>(12, 2));
  CHECK(raw::sum_to_shape(x, {}).item<float>() == 24);
  CHECK(raw::sum_to_shape(x, {2, 3, 4}).is_same(x));  // nothing to do: no copy
  // The bias gradient: (B, T, C) -> (C,)
  const Tensor grad = raw::view(arange(0, 24, 1, DType::Float32), {2, 3, 4});
  CHECK(raw::sum_to_shape(grad, {4}).to_vector<float>() == std::vector<float>{60, 66, 72, 78});
  CHECK(raw::sum_to_shape(raw::transpose(grad, 0, 2), {3, 1}).to_vector<float>() == std::vector<float>{60, 92, 124});
}

TEST_CASE("reduction errors name the op and the shape") {
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(raw::sum(x, {1, -1}),
                       doctest::Contains("sum: dim -1 appears more than once in dims (1, -1) for a tensor of shape (2, 3)"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::mean(x, {2}), doctest::Contains("mean: dim 2 is out of range"), tg::Error);
  CHECK_THROWS_WITH_AS(raw::var(x, {0, 0}), doctest::Contains("var: dim 0 appears more than once"), tg::Error);
  CHECK_THROWS_WITH_AS(raw::max(zeros({2, 0}), 1), doctest::Contains("max: dim 1 of a tensor of shape (2, 0) is empty"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::max(zeros({0})), doctest::Contains("max: a tensor of shape (0,) has no elements"), tg::Error);
  CHECK_THROWS_WITH_AS(raw::sum_to_shape(x, {5}),
                       doctest::Contains("sum_to_shape: shape (5,) does not broadcast to the input's shape (2, 3)"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::sum_to_shape(x, {1, 2, 3}), doctest::Contains("sum_to_shape: shape (1, 2, 3) has more dims"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::sum(zeros({2}, DType::Bool)), doctest::Contains("sum: needs a numeric tensor, got bool"),
                       tg::Error);
}
