#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tinygpt/nn/functional/rms_norm.h"
#include "test_functional_helpers.h"

using namespace tg;

TEST_CASE("rms_norm divides each row by its root mean square, then scales by the weight") {
  const Tensor x = from_vector<double>({3, 4, 0, 0}, {2, 2});  // rms 3.5355 and 0
  const Tensor weight = from_vector<double>({1, 2});
  const std::vector<double> y = nn::rms_norm(x, weight, 1e-6).to_vector<double>();
  const double rstd = 1 / std::sqrt(12.5 + 1e-6);
  CHECK(y[0] == doctest::Approx(3 * rstd));
  CHECK(y[1] == doctest::Approx(8 * rstd));
  CHECK(y[2] == 0);
  CHECK(y[3] == 0);
  const std::vector<double> unweighted = nn::rms_norm(x, Tensor(), 1e-6).to_vector<double>();
  CHECK(unweighted[1] == doctest::Approx(4 * rstd));
}

TEST_CASE("rms_norm gradients match central differences (float64, strided, with and without weight)") {
  Generator generator(31);
  const Tensor base = randn({3, 7, 5}, generator, DType::Float64);
  Tensor x = raw::permute(base, {1, 0, 2});  // (7, 3, 5), strided
  x.set_requires_grad();
  Tensor weight = randn({5}, generator, DType::Float64);
  weight.set_requires_grad();
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::rms_norm(in[0], in[1], 1e-5); }, {x, weight});
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::rms_norm(in[0], Tensor(), 1e-5); }, {x});
  Tensor one_channel = randn({4, 1}, generator, DType::Float64);
  one_channel.set_requires_grad();
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::rms_norm(in[0], Tensor(), 0.1); }, {one_channel});
}

// One channel is checked in float64 only (the gradcheck below): there dy/dx =
// eps rstd^3 w, which both forms reach as rstd - x^2 rstd^3, a difference of
// two values within eps / x^2 of each other, so in float32 both are rounding noise.
TEST_CASE("rms_norm matches its reference composition (float32), empty rows too") {
  Generator generator(32);
  for (const Shape& shape : {Shape{4, 9, 70}, Shape{5, 2}, Shape{0, 6}}) {
    CAPTURE(shape.size());
    const Tensor x = test::random_leaf(shape, generator);
    const Tensor weight = test::random_leaf({shape.back()}, generator);
    test::check_matches_reference([](const std::vector<Tensor>& in) { return nn::rms_norm(in[0], in[1], 1e-6); },
                                  [](const std::vector<Tensor>& in) { return nn::rms_norm_reference(in[0], in[1], 1e-6); },
                                  {x, weight});
  }
}

TEST_CASE("rms_norm of a row whose squares overflow float32 is still the row over its rms") {
  const float big = 1e30f;
  const Tensor x = from_vector<float>({big, -big, big, -big}, {1, 4});
  const std::vector<float> y = nn::rms_norm(x, Tensor(), 1e-6).to_vector<float>();
  for (int c = 0; c < 4; ++c) CHECK(std::abs(y[c]) == doctest::Approx(1.0f));
}

TEST_CASE("rms_norm refuses a weight of the wrong size or dtype, and a non-positive eps") {
  CHECK_THROWS_WITH_AS(nn::rms_norm(zeros({2, 4}), zeros({3})), doctest::Contains("needs a weight of shape (4,)"), Error);
  CHECK_THROWS_WITH_AS(nn::rms_norm(zeros({2, 4}), zeros({4}, DType::Float64)), doctest::Contains("share one dtype"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::rms_norm(zeros({2, 4}), Tensor(), 0), doctest::Contains("eps must be positive"), Error);
  CHECK_THROWS_WITH_AS(nn::rms_norm(zeros({2, 4}, DType::Int64), Tensor()), doctest::Contains("must be floating"), Error);
}
