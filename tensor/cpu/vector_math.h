// Math functions the compiler can vectorise.
//
// std::exp is a library call: without -ffast-math (which this project never
// enables) GCC will not turn a loop over it into AVX2 code, and softmax,
// cross-entropy and GELU spend most of their time in it. exp_fast<float> is an
// inlined, branch-free version that GCC does vectorise (8 floats per
// instruction), accurate to 2 ulp of std::exp (tests/tensor/test_vector_math.cpp
// checks it over the whole float range). Double precision is only used for
// gradient checks, so exp_fast<double> is simply std::exp.
#pragma once
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "tinygpt/tensor/runtime/isa.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h): AVX-512 kernels inline their own.
inline namespace TG_ISA {

// exp(x) = 2^n * exp(r), with n = round(x / ln 2) and r = x - n ln 2 in [-ln2/2, ln2/2],
// where a degree-7 polynomial (Cephes' coefficients) gives exp(r) to float precision.
namespace exp_parts {

inline constexpr float kMinInput = -87.33654475f;  // ln(FLT_MIN): below it the result would be subnormal
inline constexpr float kMaxInput = 88.72283905f;   // ln(FLT_MAX): above it the result is +inf
inline constexpr float kRoundingShift = 0x1.8p23f;

// exp(x) = polynomial * 2^exponent, for x in [kMinInput, kMaxInput] (NaN stays NaN).
struct Split {
  float polynomial;  // exp(r)
  int32_t exponent;  // n
};
inline Split split(float x) {
  constexpr float kLog2e = 1.44269504088896341f;
  // ln 2 split in two (Cody-Waite) so that r = x - n ln 2 loses no bits: kLn2High
  // has only 9 significant bits, so n * kLn2High is exact for |n| <= 128.
  constexpr float kLn2High = 0.693359375f;
  constexpr float kLn2Low = -2.12194440e-4f;
  // Adding 1.5 * 2^23 rounds to an integer and leaves that integer in the low mantissa bits.
  const float shifted = std::fma(x, kLog2e, kRoundingShift);
  const float n = shifted - kRoundingShift;
  float r = std::fma(n, -kLn2High, x);
  r = std::fma(n, -kLn2Low, r);

  float p = 1.9875691500e-4f;
  p = std::fma(p, r, 1.3981999507e-3f);
  p = std::fma(p, r, 8.3334519073e-3f);
  p = std::fma(p, r, 4.1665795894e-2f);
  p = std::fma(p, r, 1.6666665459e-1f);
  p = std::fma(p, r, 5.0000001201e-1f);
  p = std::fma(p, r * r, r + 1.0f);  // 1 + r + r^2 (1/2 + r/6 + ...)
  return {p, std::bit_cast<int32_t>(shifted) - std::bit_cast<int32_t>(kRoundingShift)};
}

}  // namespace exp_parts

// Any float x, as std::exp: 0 below ln(FLT_MIN) (where std::exp would give a
// subnormal), +inf above ln(FLT_MAX), NaN for NaN.
inline float exp_fast(float x) {
  using namespace exp_parts;
  // Comparisons are false for NaN, so a NaN input stays NaN throughout.
  float clamped = x < kMinInput ? kMinInput : x;
  clamped = clamped > kMaxInput ? kMaxInput : clamped;
  const Split parts = split(clamped);
  // 2^n built from exponent bits. n reaches 128 at the top of the range, one past
  // the largest float exponent, so it is applied as 2^(n/2) * 2^(n - n/2).
  const int32_t half = parts.exponent >> 1;
  const float scale_a = std::bit_cast<float>((half + 127) << 23);
  const float scale_b = std::bit_cast<float>((parts.exponent - half + 127) << 23);
  // Out-of-range inputs are handled by a factor rather than a select of the
  // result: GCC would otherwise move the whole computation under a branch and
  // refuse to vectorise it. The factor comes before the scales: for an input
  // below the range (the -inf of a masked attention score) p * 2^-126 would
  // be a subnormal before the 0 wiped it, and a subnormal product costs a
  // microcode assist (the attention softmax ran 1.3x slower on AMD Zen 5).
  const float range_factor = x < kMinInput ? 0.0f : (x > kMaxInput ? std::numeric_limits<float>::infinity() : 1.0f);
  return parts.polynomial * range_factor * scale_a * scale_b;
}

// The same for x within [ln(FLT_MIN), 88] (n <= 127, so 2^n is one float): no
// range checks and one scale, the same bits as exp_fast there.
inline float exp_fast_in_range(float x) {
  const exp_parts::Split parts = exp_parts::split(x);
  return parts.polynomial * std::bit_cast<float>((parts.exponent + 127) << 23);
}

inline double exp_fast(double x) { return std::exp(x); }
inline double exp_fast_in_range(double x) { return std::exp(x); }

// exp of x clamped to [ln(FLT_MIN), upper], upper <= 88, through
// exp_fast_in_range: for kernels bound by their arithmetic (GELU, cross-entropy),
// where exp_fast's range checks cost as much as the rest of its work (GELU's
// forward + backward ran 1.65x faster without them). Below the range it gives
// 1.2e-38, not 0; NaN stays NaN.
template <class T>
T exp_fast_clamped(T x, T upper = static_cast<T>(88)) {
  const T lower = static_cast<T>(exp_parts::kMinInput);
  return exp_fast_in_range(x < lower ? lower : (x > upper ? upper : x));
}

}  // namespace TG_ISA
}  // namespace tg::cpu
