#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/nn/functional/rope.h"
#include "test_functional_helpers.h"

using namespace tg;

TEST_CASE("rope rotates interleaved pairs by pos * base^(-2i/HS)") {
  // HS = 4, one position at pos = 2 (offset 2): pair 0 turns by 2 rad, pair 1 by 2 / 100 rad (base 10^4).
  const Tensor x = from_vector<double>({1, 0, 0, 1}, {1, 1, 1, 4});
  const std::vector<double> y = nn::rope(x, 2).to_vector<double>();
  CHECK(y[0] == doctest::Approx(std::cos(2.0)));
  CHECK(y[1] == doctest::Approx(std::sin(2.0)));
  CHECK(y[2] == doctest::Approx(-std::sin(0.02)));
  CHECK(y[3] == doctest::Approx(std::cos(0.02)));
}

TEST_CASE("rope gradients match central differences (float64, strided, with an offset)") {
  Generator generator(14);
  const Tensor base = randn({2, 5, 3, 6}, generator, DType::Float64);  // (B, T, NH, HS)
  Tensor x = raw::permute(base, {0, 2, 1, 3});                          // (B, NH, T, HS), strided
  x.set_requires_grad();
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::rope(in[0], 7); }, {x});
}

TEST_CASE("rope matches its reference composition (float32)") {
  Generator generator(15);
  const Tensor x = test::random_leaf({2, 3, 9, 8}, generator);
  test::check_matches_reference([](const std::vector<Tensor>& in) { return nn::rope(in[0], 3, 500.0); },
                                [](const std::vector<Tensor>& in) { return nn::rope_reference(in[0], 3, 500.0); }, {x});
}

TEST_CASE("rope keeps dot products of equal offsets: q_m . k_n depends on m - n only") {
  Generator generator(16);
  const Tensor q = randn({1, 1, 1, 8}, generator, DType::Float64), k = randn({1, 1, 1, 8}, generator, DType::Float64);
  auto dot = [&](int64_t m, int64_t n) {
    const std::vector<double> a = nn::rope(q, m).to_vector<double>(), b = nn::rope(k, n).to_vector<double>();
    double total = 0;
    for (size_t i = 0; i < a.size(); ++i) total += a[i] * b[i];
    return total;
  };
  CHECK(dot(5, 2) == doctest::Approx(dot(13, 10)));
}

TEST_CASE("rope needs (B, NH, T, HS) with HS even") {
  CHECK_THROWS_WITH_AS(nn::rope(zeros({1, 1, 2, 5})), doctest::Contains("rope: x must be floating (B, NH, T, HS) with HS even, got float32 of shape (1, 1, 2, 5)"), Error);
}
