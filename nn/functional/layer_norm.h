// Layer normalisation over the last dim (Ba, Kiros, Hinton 2016), as torch.nn.functional.layer_norm:
//
//   mean = (1/C) sum_c x_c        var = (1/C) sum_c (x_c - mean)^2   (biased, as torch)
//   y_c  = (x_c - mean) / sqrt(var + eps) * weight_c + bias_c
//
// x (..., C), weight (C), bias (C) -> y (..., C). Float32 or float64 (all three alike).
#pragma once
#include <cmath>
#include <cstdint>

#include "tensor/tensor.h"

namespace tg::nn {

template <class T>
struct RowMoments {
  T mean, rstd;  // rstd = 1 / sqrt(var + eps)
};

// One row: x (C) -> y (C), returning its mean and rstd. The kernel under
// layer_norm, and the fused decode step's (models/gpt_decode.cpp): same numbers.
template <class T>
inline RowMoments<T> layer_norm_row(const T* x, const T* weight, const T* bias, T* y, int64_t channels, double eps) {
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t c = 0; c < channels; ++c) sum += x[c];
  const T mean = sum / static_cast<T>(channels);
  // Two passes (mean, then squared deviations) rather than E[x^2] - E[x]^2,
  // which cancels catastrophically when |mean| >> std. The row is in L1 anyway.
  T squares = 0;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < channels; ++c) squares += (x[c] - mean) * (x[c] - mean);
  const T rstd = static_cast<T>(1) / std::sqrt(squares / static_cast<T>(channels) + static_cast<T>(eps));
#pragma omp simd
  for (int64_t c = 0; c < channels; ++c) y[c] = std::fma((x[c] - mean) * rstd, weight[c], bias[c]);
  return {mean, rstd};
}

// The fused op: one pass per row forward, one pass per row backward.
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// The same function composed of autograd ops (mean, sub, mul, sqrt, ...): the
// clear version tests compare against and the step-through shows.
Tensor layer_norm_reference(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

}  // namespace tg::nn
