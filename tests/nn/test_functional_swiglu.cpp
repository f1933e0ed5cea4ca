#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tinygpt/nn/functional/relu_squared.h"
#include "tinygpt/nn/functional/swiglu.h"
#include "test_functional_helpers.h"

using namespace tg;

TEST_CASE("swiglu is silu(gate) * up on the two halves of the last dim") {
  const Tensor x = from_vector<double>({1, -2, 3, 5}, {1, 4});  // gate (1, -2), up (3, 5)
  const std::vector<double> y = nn::swiglu(x).to_vector<double>();
  REQUIRE(y.size() == 2);
  CHECK(y[0] == doctest::Approx(1 / (1 + std::exp(-1.0)) * 3));
  CHECK(y[1] == doctest::Approx(-2 / (1 + std::exp(2.0)) * 5));
}

TEST_CASE("swiglu and relu_squared gradients match central differences (float64, strided)") {
  Generator generator(41);
  const Tensor base = randn({6, 3, 10}, generator, DType::Float64);
  Tensor x = raw::permute(base, {1, 0, 2});  // (3, 6, 10), strided
  x.set_requires_grad();
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::swiglu(in[0]); }, {x});
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::relu_squared(in[0]); }, {x});
}

TEST_CASE("swiglu and relu_squared match their reference compositions (float32), empty and size-1 dims too") {
  Generator generator(42);
  for (const Shape& shape : {Shape{4, 9, 70}, Shape{5, 2}, Shape{0, 6}, Shape{3, 0}}) {
    CAPTURE(shape.size());
    const Tensor x = test::random_leaf(shape, generator);
    test::check_matches_reference([](const std::vector<Tensor>& in) { return nn::swiglu(in[0]); },
                                  [](const std::vector<Tensor>& in) { return nn::swiglu_reference(in[0]); }, {x});
    test::check_matches_reference([](const std::vector<Tensor>& in) { return nn::relu_squared(in[0]); },
                                  [](const std::vector<Tensor>& in) { return nn::relu_squared_reference(in[0]); }, {x});
  }
}

TEST_CASE("swiglu at the edges: a very negative gate gives exactly 0, a large one up itself, NaN stays NaN") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Tensor x = from_vector<float>({-1e30f, 1e30f, nan, 2, 3, 4}, {1, 6});
  const std::vector<float> y = nn::swiglu(x).to_vector<float>();
  CHECK(y[0] == 0.0f);
  CHECK(y[1] == doctest::Approx(3e30f));  // silu(1e30) = 1e30 exactly, times up
  CHECK(std::isnan(y[2]));
  const std::vector<float> r = nn::relu_squared(from_vector<float>({-3, 0, 2, nan})).to_vector<float>();
  CHECK(r[0] == 0.0f);
  CHECK(r[1] == 0.0f);
  CHECK(r[2] == 4.0f);
  CHECK(std::isnan(r[3]));
}

TEST_CASE("swiglu needs an even last dim; both need a floating tensor") {
  CHECK_THROWS_WITH_AS(nn::swiglu(zeros({2, 5})), doctest::Contains("swiglu: x must be floating (..., 2H)"), Error);
  CHECK_THROWS_WITH_AS(nn::relu_squared(zeros({2}, DType::Int64)), doctest::Contains("needs a floating-point tensor"),
                       Error);
}
