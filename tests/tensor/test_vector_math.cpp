#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tinygpt/tensor/cpu/vector_math.h"

namespace {

// Distance between two floats in units in the last place of the exact value.
double ulp_error(float approximate, double exact) {
  const float rounded = static_cast<float>(exact);
  const double ulp = std::nextafter(rounded, std::numeric_limits<float>::infinity()) - rounded;
  return std::abs(static_cast<double>(approximate) - exact) / ulp;
}

}  // namespace

TEST_CASE("exp_fast is within 2 ulp of exp over the whole normal float range") {
  double worst = 0;
  const int samples = 2'000'000;
  for (int i = 0; i <= samples; ++i) {
    const float x = -87.3f + (88.7f + 87.3f) * static_cast<float>(i) / samples;
    worst = std::max(worst, ulp_error(tg::cpu::exp_fast(x), std::exp(static_cast<double>(x))));
  }
  CHECK(worst <= 2.0);
}

TEST_CASE("exp_fast is exact at 0 and handles the edges like std::exp") {
  CHECK(tg::cpu::exp_fast(0.0f) == 1.0f);
  CHECK(tg::cpu::exp_fast(-std::numeric_limits<float>::infinity()) == 0.0f);
  CHECK(tg::cpu::exp_fast(-1000.0f) == 0.0f);
  CHECK(std::isinf(tg::cpu::exp_fast(89.0f)));
  CHECK(std::isinf(tg::cpu::exp_fast(std::numeric_limits<float>::infinity())));
  CHECK(std::isnan(tg::cpu::exp_fast(std::numeric_limits<float>::quiet_NaN())));
  // Just below overflow, where 2^n needs the largest exponent.
  CHECK(ulp_error(tg::cpu::exp_fast(88.72f), std::exp(static_cast<double>(88.72f))) <= 2.0);
  // Below ln(FLT_MIN) the exact result is subnormal (< 1.2e-38); we flush it to 0.
  CHECK(tg::cpu::exp_fast(-88.0f) == 0.0f);
}

TEST_CASE("exp_fast_in_range gives exp_fast's bits everywhere in its range, ln(FLT_MIN) to 88") {
  const int samples = 2'000'000;
  int differing = 0;
  for (int i = 0; i <= samples; ++i) {
    const float x = tg::cpu::exp_parts::kMinInput + (88.0f - tg::cpu::exp_parts::kMinInput) * static_cast<float>(i) / samples;
    differing += tg::cpu::exp_fast_in_range(x) != tg::cpu::exp_fast(x);
  }
  CHECK(differing == 0);
  CHECK(tg::cpu::exp_fast_in_range(88.0f) == tg::cpu::exp_fast(88.0f));
  CHECK(tg::cpu::exp_fast_in_range(tg::cpu::exp_parts::kMinInput) == tg::cpu::exp_fast(tg::cpu::exp_parts::kMinInput));
}

TEST_CASE("exp_fast_clamped: exp_fast inside its range, the range's ends outside, NaN as NaN") {
  CHECK(tg::cpu::exp_fast_clamped(-3.5f) == tg::cpu::exp_fast(-3.5f));
  CHECK(tg::cpu::exp_fast_clamped(-1000.0f) == tg::cpu::exp_fast(tg::cpu::exp_parts::kMinInput));
  CHECK(tg::cpu::exp_fast_clamped(1000.0f) == tg::cpu::exp_fast(88.0f));
  CHECK(tg::cpu::exp_fast_clamped(1000.0f, 80.0f) == tg::cpu::exp_fast(80.0f));
  CHECK(std::isnan(tg::cpu::exp_fast_clamped(std::numeric_limits<float>::quiet_NaN())));
}

TEST_CASE("exp_fast for double is std::exp") {
  CHECK(tg::cpu::exp_fast(1.5) == std::exp(1.5));
}
