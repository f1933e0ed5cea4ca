// GELU's kernels, value then slope, for both forms (the op, its checks and its
// reference composition: nn/functional/gelu.h).
//
// Elementwise: x (n) -> y (n) forward; dy (n), x (n) -> dx (n) = dy * gelu'(x) backward.
//
// Tanh form (GPT-2), rewritten without tanh: since
// 0.5 (1 + tanh(u)) = sigmoid(2u) = 1 / (1 + exp(-2u)),
//
//   u        = sqrt(2/pi) (x + 0.044715 x^3)
//   gelu(x)  = x * s,                          s = 1 / (1 + e),  e = exp(-2u)
//   gelu'(x) = s + x * 2 s (1 - s) * du/dx,     du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//
// and s (1 - s) = e s^2 exactly, which avoids the cancellation of 1 - s when s ~ 1.
// One exp per element (vectorised; see tensor/cpu/vector_math.h) instead of a tanh
// call: exp_fast_clamped on -2u, without exp_fast's checks for inputs outside
// its range. GELU is bound by its arithmetic, so one exp instead of a tanh call
// is most of its time (figures: docs/performance.md).
//
// Erf form (exact):
//
//   gelu(x)  = x * Phi(x),             Phi(x) = 0.5 (1 + erf(x / sqrt 2))
//   gelu'(x) = Phi(x) + x * phi(x),    phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
//
// std::erf does not vectorise, so this form is slower than the tanh one (it is
// not GPT-2's; it is here for models that ask for the exact GELU).
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/cpu/vector_math.h"

namespace tg::cpu {

// One copy per instruction set (tensor/runtime/isa.h); callers outside the kernel table get the AVX2 one.
inline namespace TG_ISA {

// The constants of both forms (kernels and the reference composition).
inline constexpr double kGeluSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
inline constexpr double kGeluCubicCoefficient = 0.044715;
inline constexpr double kGeluInvSqrt2 = 0.7071067811865476;     // 1 / sqrt(2)
inline constexpr double kGeluInvSqrt2Pi = 0.3989422804014327;   // 1 / sqrt(2 pi)

// The value of each form at one x: the kernels under gelu, and the fused decode
// step's (models/gpt_decode.cpp): same numbers.
// Past the exp's clamp (-2u > 88, x below about -10.5) the true sigmoid(2u) is below 1e-38 and
// x * sigmoid(2u) underflows: exactly 0 there, where the clamped e gave x * 6e-39 (which flips
// sign() and == 0 downstream) and -inf gave -inf. A select, so the loop still vectorises.
inline constexpr double kGeluExpClamp = 88;
template <class T>
inline T gelu_tanh_value(T x) {
  const T u = static_cast<T>(kGeluSqrt2OverPi) * (x + static_cast<T>(kGeluCubicCoefficient) * x * x * x);
  const T minus_2u = static_cast<T>(-2) * u;
  const T e = exp_fast_clamped(minus_2u, static_cast<T>(kGeluExpClamp));  // below its range s is 1 either way
  const T y = x / (static_cast<T>(1) + e);  // x * sigmoid(2u) = 0.5 x (1 + tanh u)
  return minus_2u > static_cast<T>(kGeluExpClamp) ? static_cast<T>(0) : y;
}
template <class T>
inline T gelu_erf_value(T x) {
  return static_cast<T>(0.5) * x * (1 + std::erf(x * static_cast<T>(kGeluInvSqrt2)));
}

// The slope gelu'(x) of each form at one x (the backward multiplies dy by it).
template <class T>
inline T gelu_tanh_slope(T x_in) {
  // Past 12 the slope is 1 to the last bit in float and double, and x^2 would overflow float32
  // past 1.8e19 (the slope was then 1e30 * 1e-38 * inf = inf): taken at 12 there (NaN stays NaN).
  const T x = std::min(x_in, static_cast<T>(12));
  const T square = x * x;
  const T u = static_cast<T>(kGeluSqrt2OverPi) * (x + static_cast<T>(kGeluCubicCoefficient) * square * x);
  const T du_dx = static_cast<T>(kGeluSqrt2OverPi) * (1 + static_cast<T>(3 * kGeluCubicCoefficient) * square);
  // Capped at 80 so that e * s * s stays finite (inf * 0 = NaN). Past the cap the true slope is
  // below 1e-32 and falls, so it is 0 there: the capped e made it grow like x^3 instead (-3.9 at
  // x = -1e12).
  const T minus_2u = static_cast<T>(-2) * u;
  const T e = exp_fast_clamped(minus_2u, static_cast<T>(80));
  const T s = static_cast<T>(1) / (1 + e);
  const T slope = s + x * (2 * e * s * s) * du_dx;
  return minus_2u > static_cast<T>(80) ? static_cast<T>(0) : slope;
}
template <class T>
inline T gelu_erf_slope(T x) {
  const T cdf = static_cast<T>(0.5) * (1 + std::erf(x * static_cast<T>(kGeluInvSqrt2)));
  const T pdf = static_cast<T>(kGeluInvSqrt2Pi) * std::exp(static_cast<T>(-0.5) * x * x);
  return cdf + x * pdf;
}

// x (n) -> y (n)
// values (n) = gelu(values), on the calling thread: the fused decode step's
// activation (models/gpt_decode.cpp), the same numbers as gelu_forward_kernel.
inline void gelu_in_place(float* values, int64_t count, nn::GeluApproximation approximation) {
  if (approximation == nn::GeluApproximation::Tanh) {
#pragma omp simd
    for (int64_t i = 0; i < count; ++i) values[i] = gelu_tanh_value(values[i]);
  } else {
    for (int64_t i = 0; i < count; ++i) values[i] = gelu_erf_value(values[i]);
  }
}

template <class T>
void gelu_forward_kernel(const T* x, T* y, int64_t count, nn::GeluApproximation approximation) {
  if (approximation == nn::GeluApproximation::Tanh) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) y[i] = gelu_tanh_value(x[i]);
  } else {
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) y[i] = gelu_erf_value(x[i]);
  }
}

// dy (n), x (n) -> dx (n)
template <class T>
void gelu_backward_kernel(const T* dy, const T* x, T* dx, int64_t count, nn::GeluApproximation approximation) {
  if (approximation == nn::GeluApproximation::Tanh) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) dx[i] = dy[i] * gelu_tanh_slope(x[i]);
  } else {
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) dx[i] = dy[i] * gelu_erf_slope(x[i]);
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
