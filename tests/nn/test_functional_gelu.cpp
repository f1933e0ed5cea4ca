#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/nn/functional/gelu.h"
#include "test_functional_helpers.h"

using namespace tg;

namespace {

// 0.5 x (1 + tanh(u)) in double, written as x / (1 + exp(-2u)): in the negative tail
// 1 + tanh(u) would cancel to nothing even in double precision.
double gelu_tanh_exact(double x) {
  const double u = std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x);
  return x / (1 + std::exp(-2 * u));
}

struct ValuesAndSlopes {
  std::vector<float> values, slopes;
};

// The tanh form's value and slope at each of `points`, through the op and its backward.
ValuesAndSlopes gelu_values_and_slopes(const std::vector<float>& points) {
  Tensor leaf = from_vector<float>(points);
  leaf.set_requires_grad();
  const Tensor y = nn::gelu(leaf);
  backward(y, ones_like(y));
  return {y.to_vector<float>(), leaf.grad().to_vector<float>()};
}

}  // namespace

TEST_CASE("gelu at hand-checkable points") {
  const Tensor x = from_vector<double>({0.0, 1.0, -1.0});
  const std::vector<double> tanh_form = nn::gelu(x).to_vector<double>();
  CHECK(tanh_form[0] == 0.0);
  CHECK(tanh_form[1] == doctest::Approx(0.8411919906));  // 0.5 (1 + tanh(0.7978845608 * 1.044715))
  CHECK(tanh_form[2] == doctest::Approx(-0.1588080094));
  const std::vector<double> erf_form = nn::gelu(x, nn::GeluApproximation::Erf).to_vector<double>();
  CHECK(erf_form[1] == doctest::Approx(0.8413447461));  // Phi(1)
}

TEST_CASE("gelu's far negative tail is exactly 0, value and slope, through -inf; NaN stays NaN") {
  // The clamped exp gave x * 6e-39 (a sign where the truth is 0), a slope growing like x^3
  // (-3.9 at -1e12) and gelu(-inf) = -inf.
  const std::vector<float> tail = {-11.0f, -100.0f, -1e12f, -1e16f, -1e30f, -INFINITY};
  const ValuesAndSlopes gelu = gelu_values_and_slopes(tail);
  for (size_t i = 0; i < tail.size(); ++i) {
    CAPTURE(tail[i]);
    CHECK(gelu.values[i] == 0.0f);
    CHECK(gelu.slopes[i] == 0.0f);
  }
  // Just inside the clamp the value is the formula's, small and negative, not 0.
  CHECK(nn::gelu(from_vector<float>({-10.0f})).to_vector<float>()[0] < 0.0f);
  CHECK(std::isnan(nn::gelu(from_vector<float>({NAN})).to_vector<float>()[0]));
  CHECK(nn::gelu(from_vector<float>({INFINITY})).to_vector<float>()[0] == INFINITY);
}

TEST_CASE("gelu float32 agrees with the tanh formula in double over a wide range") {
  std::vector<float> values;
  for (int i = -20000; i <= 20000; ++i) values.push_back(static_cast<float>(i) * 1e-3f);  // [-20, 20]
  const Tensor x = from_vector<float>(values);
  Tensor y, dx;
  {
    Tensor leaf = x;
    leaf.set_requires_grad();
    y = nn::gelu(leaf);
    backward(y, ones_like(y));
    dx = leaf.grad();
  }
  const std::vector<float> outputs = y.to_vector<float>(), slopes = dx.to_vector<float>();
  for (size_t i = 0; i < values.size(); ++i) {
    const double v = values[i];
    const double exact = gelu_tanh_exact(v);
    const double h = 1e-6;
    const double exact_slope = (gelu_tanh_exact(v + h) - gelu_tanh_exact(v - h)) / (2 * h);
    // In the negative tail gelu(x) ~ x exp(-2u): the float rounding of u (relative
    // 6e-8) is amplified by |2u|, whoever computes it; allow for that condition number.
    const double condition = std::max(1.0, 2 * std::sqrt(2 / M_PI) * std::abs(v + 0.044715 * v * v * v));
    REQUIRE(std::abs(outputs[i] - exact) <= 4e-7 * condition * std::abs(exact) + 1e-30);
    REQUIRE(std::abs(slopes[i] - exact_slope) <= 1e-6 * std::abs(exact_slope) + 2e-7);
  }
}

TEST_CASE("gelu gradients match central differences (float64, both forms)") {
  Generator generator(5);
  const Tensor base = randn({4, 6}, generator, DType::Float64);
  Tensor x = raw::transpose(base, 0, 1);  // not contiguous
  x.set_requires_grad();
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::gelu(in[0]); }, {x});
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::gelu(in[0], nn::GeluApproximation::Erf); }, {x});
}

TEST_CASE("gelu matches its reference composition (float32, both forms)") {
  Generator generator(6);
  const Tensor x = test::random_leaf({3, 7, 40}, generator);
  for (const nn::GeluApproximation form : {nn::GeluApproximation::Tanh, nn::GeluApproximation::Erf}) {
    test::check_matches_reference([form](const std::vector<Tensor>& in) { return nn::gelu(in[0], form); },
                                  [form](const std::vector<Tensor>& in) { return nn::gelu_reference(in[0], form); }, {x});
  }
}

TEST_CASE("gelu rejects integer tensors, naming the shape") {
  CHECK_THROWS_WITH_AS(nn::gelu(zeros({2, 2}, DType::Int64)), doctest::Contains("gelu(tanh): needs a floating-point tensor, got int64 of shape (2, 2)"), Error);
}

TEST_CASE("gelu's far positive tail has slope 1 (x^2 overflowing float32 made it inf past 1.8e19)") {
  const std::vector<float> tail = {20.0f, 1e12f, 1e20f, 1e30f, 3e38f};
  const ValuesAndSlopes gelu = gelu_values_and_slopes(tail);
  for (size_t i = 0; i < tail.size(); ++i) {
    CAPTURE(tail[i]);
    CHECK(gelu.values[i] == tail[i]);
    CHECK(gelu.slopes[i] == 1.0f);
  }
}
