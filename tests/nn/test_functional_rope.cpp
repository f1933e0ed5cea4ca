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

TEST_CASE("rope with the half pairing turns (x_i, x_i+HS/2), as Hugging Face's rotate_half") {
  // HS = 4 at pos = 2: pair 0 is channels (0, 2) and turns by 2 rad, pair 1 is (1, 3) and turns by 0.02 rad.
  const Tensor x = from_vector<double>({1, 1, 0, 0}, {1, 1, 1, 4});
  const std::vector<double> y = nn::rope(x, 2, nn::Rotary{10000.0, {}, nn::RopePairing::Half}).to_vector<double>();
  CHECK(y[0] == doctest::Approx(std::cos(2.0)));
  CHECK(y[2] == doctest::Approx(std::sin(2.0)));
  CHECK(y[1] == doctest::Approx(std::cos(0.02)));
  CHECK(y[3] == doctest::Approx(std::sin(0.02)));
}

TEST_CASE("rope, half pairing and llama3 scaling: gradients match central differences and the reference") {
  const nn::Rotary rotary{500000.0, nn::RopeScaling::parse("llama3:8,1,4,16"), nn::RopePairing::Half};
  Generator generator(17);
  const Tensor base = randn({2, 5, 3, 8}, generator, DType::Float64);  // (B, T, NH, HS)
  Tensor x = raw::permute(base, {0, 2, 1, 3});                          // (B, NH, T, HS), strided
  x.set_requires_grad();
  test::check_gradients([&](const std::vector<Tensor>& in) { return nn::rope(in[0], 7, rotary); }, {x});
  const Tensor x32 = test::random_leaf({2, 3, 9, 8}, generator);
  test::check_matches_reference([&](const std::vector<Tensor>& in) { return nn::rope(in[0], 3, rotary); },
                                [&](const std::vector<Tensor>& in) { return nn::rope_reference(in[0], 3, rotary); },
                                {x32});
}

TEST_CASE("rope scaling: linear divides every frequency, llama3 keeps the fast pairs, divides the slow, blends between") {
  const nn::Rotary plain{10000.0};
  nn::Rotary linear = plain, llama3 = plain;
  linear.scaling = nn::RopeScaling::parse("linear:4");
  llama3.scaling = nn::RopeScaling::parse("llama3:8,1,4,64");  // wavelengths below 16 kept, above 64 divided by 8
  const std::vector<double> unscaled = plain.inverse_frequencies(16), by_four = linear.inverse_frequencies(16),
                            mixed = llama3.inverse_frequencies(16);
  for (size_t i = 0; i < unscaled.size(); ++i) {
    CAPTURE(i);
    CHECK(by_four[i] == doctest::Approx(unscaled[i] / 4));
    const double wavelength = 2 * M_PI / unscaled[i];
    if (wavelength < 16) CHECK(mixed[i] == unscaled[i]);
    if (wavelength > 64) CHECK(mixed[i] == doctest::Approx(unscaled[i] / 8));
    if (wavelength >= 16 && wavelength <= 64) CHECK((mixed[i] < unscaled[i] && mixed[i] > unscaled[i] / 8));
  }
}

TEST_CASE("rope scaling: the text forms round-trip, anything else is refused naming the grammar") {
  for (const char* text : {"none", "linear:2", "llama3:32,1,4,8192"})
    CHECK(nn::RopeScaling::parse(text).text() == text);
  for (const char* bad : {"", "linear", "linear:", "linear:0", "linear:x", "llama3:8,1,4", "llama3:8,4,1,8192", "yarn:4"})
    CHECK_THROWS_WITH_AS(nn::RopeScaling::parse(bad), doctest::Contains("rope scaling"), Error);
}
