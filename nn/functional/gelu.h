// GELU, the Gaussian error linear unit (Hendrycks & Gimpel 2016): x * Phi(x), Phi the
// standard normal CDF.
//
//   Erf:  gelu(x) = 0.5 x (1 + erf(x / sqrt 2))                                 (exact)
//   Tanh: gelu(x) = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + 0.044715 x^3)    (GPT-2's gelu_new,
//         torch's approximate='tanh')
//
// Elementwise on any shape; float32 or float64. The kernels, value and slope of
// both forms side by side: tensor/cpu/gelu_kernels.h.
#pragma once
#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor gelu(const Tensor& x, GeluApproximation approximation = GeluApproximation::Tanh);
// The same function composed of autograd ops (mul, add, tanh, ...; erf, which the
// engine lacks as a primitive, is defined as a one-line op beside it).
Tensor gelu_reference(const Tensor& x, GeluApproximation approximation = GeluApproximation::Tanh);

}  // namespace tg::nn
