// Softmax and log-softmax: exact small cases, stability, -inf and NaN rows,
// every dim and layout, float32 against float64, the backward helpers.
#include <doctest/doctest.h>
#include <omp.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/softmax.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

// softmax of one row, the textbook way, in double.
std::vector<double> reference_softmax(const std::vector<double>& row) {
  double m = -INFINITY;
  for (double v : row) m = std::max(m, v);
  std::vector<double> out;
  double total = 0;
  for (double v : row) total += std::exp(v - m);
  for (double v : row) out.push_back(std::exp(v - m) / total);
  return out;
}

}  // namespace

TEST_CASE("softmax and log_softmax by hand") {
  CHECK(raw::softmax(from_vector<float>({0, 0}), 0).to_vector<float>() == std::vector<float>{0.5f, 0.5f});
  const std::vector<double> y = raw::softmax(from_vector<double>({1, 2, 3}), 0).to_vector<double>();
  const double total = std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  CHECK(y[0] == doctest::Approx(std::exp(1.0) / total).epsilon(1e-14));
  CHECK(y[2] == doctest::Approx(std::exp(3.0) / total).epsilon(1e-14));
  const std::vector<double> log_y = raw::log_softmax(from_vector<double>({0, 0, 0, 0}), -1).to_vector<double>();
  for (double v : log_y) CHECK(v == doctest::Approx(-std::log(4.0)).epsilon(1e-15));
  CHECK(raw::softmax(scalar(3), 0).item<float>() == 1);  // a 0-d tensor is one line of one element
  CHECK(raw::log_softmax(scalar(3), -1).item<float>() == 0);
}

TEST_CASE("softmax is stable for large inputs") {
  CHECK(raw::softmax(from_vector<float>({1000, 1000}), 0).to_vector<float>() == std::vector<float>{0.5f, 0.5f});
  CHECK(raw::softmax(from_vector<float>({-1000, 0}), 0).to_vector<float>() == std::vector<float>{0, 1});
  const std::vector<float> log_y = raw::log_softmax(from_vector<float>({-1000, 0}), 0).to_vector<float>();
  CHECK(log_y[0] == -1000);
  CHECK(log_y[1] == 0);
}

TEST_CASE("-inf entries get probability 0; a row of all -inf is NaN, as in PyTorch") {
  const Tensor x = from_vector<float>({0, -kInf, 0, -kInf, -kInf, -kInf}, {2, 3});
  const std::vector<float> y = raw::softmax(x, 1).to_vector<float>();
  CHECK(y[0] == 0.5f);
  CHECK(y[1] == 0.0f);
  CHECK(y[2] == 0.5f);
  for (int i = 3; i < 6; ++i) CHECK(std::isnan(y[i]));
  const std::vector<float> log_y = raw::log_softmax(x, 1).to_vector<float>();
  CHECK(log_y[1] == -kInf);
  for (int i = 3; i < 6; ++i) CHECK(std::isnan(log_y[i]));
  const std::vector<double> y64 = raw::softmax(raw::to_dtype(x, DType::Float64), 1).to_vector<double>();
  CHECK(y64[1] == 0.0);
  CHECK(std::isnan(y64[3]));
}

TEST_CASE("a NaN poisons its row only") {
  const Tensor x = from_vector<float>({1, NAN, 2, 1, 2, 3}, {2, 3});
  const std::vector<float> y = raw::softmax(x, 1).to_vector<float>();
  for (int i = 0; i < 3; ++i) CHECK(std::isnan(y[i]));
  for (int i = 3; i < 6; ++i) CHECK(!std::isnan(y[i]));
}

TEST_CASE("float32 softmax matches the float64 reference") {
  Generator generator(5);
  // A spread of +-40 reaches deep into exp's range (e^-80 relative to the max).
  // Rounding x - max to float32 alone costs up to |x - max| * 2^-24 = 5e-6
  // relative, in PyTorch too; the tolerance is PyTorch parity's 1e-5.
  const Tensor x = uniform({16, 777}, -40, 40, generator, DType::Float32);
  const std::vector<double> values = x.to_vector<double>();
  const std::vector<double> got = raw::softmax(x, 1).to_vector<double>();
  const std::vector<double> got_log = raw::log_softmax(x, 1).to_vector<double>();
  for (int64_t row = 0; row < 16; ++row) {
    const std::vector<double> line(values.begin() + row * 777, values.begin() + (row + 1) * 777);
    const std::vector<double> expected = reference_softmax(line);
    for (int64_t i = 0; i < 777; ++i) {
      const double want = expected[i];
      REQUIRE(std::abs(got[row * 777 + i] - want) <= 1e-5 * want);
      REQUIRE(got_log[row * 777 + i] == doctest::Approx(std::log(want)).epsilon(1e-6));
    }
  }
}

TEST_CASE("float32 exp inside softmax is accurate over its whole range") {
  // Rows (t, 0): softmax = (e^t / (1 + e^t), 1 / (1 + e^t)), with t - max exact,
  // so only exp, the sum and the scaling round: a few float32 ulps.
  std::vector<float> pairs;
  for (float t = -86.5f; t <= 0; t += 0.0173f) pairs.insert(pairs.end(), {t, 0.0f});
  const int64_t rows = static_cast<int64_t>(pairs.size()) / 2;
  const std::vector<float> y = raw::softmax(from_vector<float>(pairs, {rows, 2}), 1).to_vector<float>();
  for (int64_t row = 0; row < rows; ++row) {
    const double e = std::exp(static_cast<double>(pairs[2 * row]));
    REQUIRE(y[2 * row] == doctest::Approx(e / (1 + e)).epsilon(6e-7).scale(0));
    REQUIRE(y[2 * row + 1] == doctest::Approx(1 / (1 + e)).epsilon(6e-7).scale(0));
  }
}

TEST_CASE("the vectorised loop body and its scalar tail give bitwise the same exp") {
  // Rows of 9: elements 0..7 go through the 8-wide loop body, element 8 through the
  // scalar tail; giving both the same value must give the same output.
  Generator generator(6);
  const Tensor x = uniform({200, 9}, -90, 0, generator, DType::Float32);
  float* values = x.data<float>();
  for (int64_t row = 0; row < 200; ++row) values[row * 9 + 8] = values[row * 9 + (row % 8)];
  const std::vector<float> y = raw::softmax(x, 1).to_vector<float>();
  for (int64_t row = 0; row < 200; ++row) {
    CAPTURE(values[row * 9 + 8]);
    CHECK(std::memcmp(&y[row * 9 + 8], &y[row * 9 + (row % 8)], sizeof(float)) == 0);
  }
}

TEST_CASE("softmax along any dim and layout equals the last-dim softmax of the moved tensor") {
  Generator generator(9);
  const Tensor base = randn({4, 5, 6}, generator, DType::Float64);
  const Tensor wide = randn({7, 3, 40}, generator, DType::Float64);  // strided lines go in tiles of 16: 16, 16, 8
  const std::vector<Tensor> layouts = {base, raw::transpose(base, 0, 2), raw::slice(base, 1, 0, 5, 2),
                                       raw::expand(raw::slice(base, 0, 0, 1), {3, 5, 6}), wide,
                                       raw::transpose(wide, 1, 2)};
  for (const Tensor& x : layouts) {
    for (int64_t dim = -3; dim < 3; ++dim) {
      CAPTURE(shape_str(x.strides()));
      CAPTURE(dim);
      const Tensor moved = raw::contiguous(raw::transpose(x, dim, -1));
      const Tensor expected = raw::transpose(raw::softmax(moved, -1), dim, -1);
      const Tensor y = raw::softmax(x, dim);
      CHECK(y.shape() == x.shape());
      CHECK(y.is_contiguous());
      CHECK(y.to_vector<double>() == expected.to_vector<double>());
      const Tensor expected_log = raw::transpose(raw::log_softmax(moved, -1), dim, -1);
      CHECK(raw::log_softmax(x, dim).to_vector<double>() == expected_log.to_vector<double>());
      // Every line sums to 1.
      for (double total : raw::sum(y, {dim}).to_vector<double>()) CHECK(total == doctest::Approx(1).epsilon(1e-14));
    }
  }
}

TEST_CASE("softmax backward helpers by hand") {
  const Tensor y = from_vector<double>({0.5, 0.5});
  const Tensor dy = from_vector<double>({1, 0});
  // dot = 0.5: dx = y * (dy - dot)
  CHECK(raw::softmax_backward(y, dy, 0).to_vector<double>() == std::vector<double>{0.25, -0.25});
  // sum(dy) = 1: dx = dy - exp(log y) * 1
  const std::vector<double> dx = raw::log_softmax_backward(raw::log_softmax(from_vector<double>({0, 0}), 0), dy, 0)
                                     .to_vector<double>();
  CHECK(dx[0] == doctest::Approx(0.5).epsilon(1e-15));
  CHECK(dx[1] == doctest::Approx(-0.5).epsilon(1e-15));
  // A broadcast gradient (stride 0) along a non-last dim.
  const Tensor y2 = raw::softmax(from_vector<float>({1, 2, 3, 4}, {2, 2}), 0);
  const Tensor ones_grad = raw::expand(scalar(1), {2, 2});
  for (float v : raw::softmax_backward(y2, ones_grad, 0).to_vector<float>()) CHECK(v == doctest::Approx(0).scale(1));
}

TEST_CASE("softmax does not depend on the thread count") {
  Generator generator(2);
  const Tensor x = randn({64, 1000}, generator);
  const Tensor dy = randn({64, 1000}, generator);
  const auto run = [&] {
    const Tensor y = raw::softmax(x, 1);
    return std::vector<Tensor>{y, raw::softmax(x, 0), raw::log_softmax(x, 1), raw::softmax_backward(y, dy, 1),
                               raw::log_softmax_backward(raw::log_softmax(x, 0), dy, 0)};
  };
  const int previous = omp_get_max_threads();
  omp_set_num_threads(1);
  const std::vector<Tensor> one = run();
  omp_set_num_threads(2);
  const std::vector<Tensor> two = run();
  omp_set_num_threads(previous);
  for (size_t i = 0; i < one.size(); ++i) {
    CAPTURE(i);
    CHECK(std::memcmp(one[i].data<float>(), two[i].data<float>(), sizeof(float) * one[i].numel()) == 0);
  }
}

TEST_CASE("softmax errors name the op and the shape") {
  CHECK_THROWS_WITH_AS(raw::softmax(arange(3), 0), doctest::Contains("softmax: needs a floating-point tensor, got int64"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::log_softmax(zeros({2, 3}), 2), doctest::Contains("log_softmax: dim 2 is out of range"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::softmax_backward(zeros({2, 3}), zeros({3, 2}), 1),
                       doctest::Contains("softmax_backward: output of shape (2, 3) and gradient of shape (3, 2) differ"),
                       tg::Error);
  CHECK_THROWS_WITH_AS(raw::log_softmax_backward(zeros({2}), zeros({2}, DType::Float64), 0),
                       doctest::Contains("log_softmax_backward: output dtype float32 and gradient dtype float64 differ"),
                       tg::Error);
}
