// GELU, the Gaussian error linear unit (Hendrycks & Gimpel 2016): x * Phi(x), Phi the
// standard normal CDF.
//
//   Erf:  gelu(x) = 0.5 x (1 + erf(x / sqrt 2))                                 (exact)
//   Tanh: gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)    (GPT-2's gelu_new,
//         torch's approximate='tanh')
//
// Elementwise on any shape; float32 or float64.
#pragma once
#include <cmath>

#include "nn/gelu_approximation.h"
#include "tensor/tensor.h"
#include "tensor/vector_math.h"

namespace tg::nn {

// The constants of both forms (forward, backward and the reference composition).
inline constexpr double kGeluSqrt2OverPi = 0.7978845608028654;  // sqrt(2 / pi)
inline constexpr double kGeluCubicCoefficient = 0.044715;
inline constexpr double kGeluInvSqrt2 = 0.7071067811865476;    // 1 / sqrt(2)

// One value, the kernels under gelu (nn/functional/gelu.cpp explains the forms)
// and the fused decode step's (models/gpt_decode.cpp): same numbers.
template <class T>
inline T gelu_tanh_value(T x) {
  const T u = static_cast<T>(kGeluSqrt2OverPi) * (x + static_cast<T>(kGeluCubicCoefficient) * x * x * x);
  return x / (static_cast<T>(1) + exp_fast(static_cast<T>(-2) * u));  // x * sigmoid(2u) = 0.5 x (1 + tanh u)
}
template <class T>
inline T gelu_erf_value(T x) {
  return static_cast<T>(0.5) * x * (1 + std::erf(x * static_cast<T>(kGeluInvSqrt2)));
}

Tensor gelu(const Tensor& x, GeluApproximation approximation = GeluApproximation::Tanh);
// The same function composed of autograd ops (mul, add, tanh, ...; erf, which the
// engine lacks as a primitive, is defined as a one-line op beside it).
Tensor gelu_reference(const Tensor& x, GeluApproximation approximation = GeluApproximation::Tanh);

}  // namespace tg::nn
