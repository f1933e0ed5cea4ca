// LayerNorm's kernels, forward then backward (the op, its checks and its
// reference composition: nn/functional/layer_norm.h).
//
// Shapes: N rows (every leading dim of x flattened), C channels (the last dim).
//
// Forward, per row:   x (C), weight (C), bias (C) -> y (C), mean, rstd
//
//   mean = (1/C) sum_c x_c      var = (1/C) sum_c (x_c - mean)^2      rstd = 1 / sqrt(var + eps)
//   y_c  = (x_c - mean) * rstd * weight_c + bias_c
//
// Backward, per row:  dy (C), x (C), weight (C), mean, rstd -> dx (C); dweight, dbias (C) summed over rows.
// With xhat = (x - mean) * rstd and dxhat = dy * weight, differentiating through
// mean and var gives
//
//   dx_c     = rstd * (dxhat_c - mean_c'(dxhat) - xhat_c * mean_c'(dxhat * xhat))
//   dweight += dy * xhat
//   dbias   += dy
//
// so the forward saves mean and rstd (N each) and the backward needs one pass
// per row. The N-row kernels below split the rows over OpenMP threads.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cpu {

// One copy per instruction set (tensor/runtime/isa.h); callers outside the kernel table get the AVX2 one.
inline namespace TG_ISA {

// A row whose squared deviations overflow T (|x - mean| past about 1e19 in float32)
// is normalised all the same: the deviations are divided by the largest of them
// first, so var = largest^2 * mean((d / largest)^2) never forms. Without it, rstd
// was 1 / inf = 0 and the output exactly the bias, where the true one is finite.
template <class T>
T rstd_of_overflowing_row(const T* x, T mean, int64_t channels, double eps) {
  T largest = 0;
  for (int64_t c = 0; c < channels; ++c) largest = std::max(largest, std::abs(x[c] - mean));
  if (!(largest <= std::numeric_limits<T>::max())) return 0;  // an infinite row: 1 / sqrt(inf), as before
  T scaled_squares = 0;
  for (int64_t c = 0; c < channels; ++c) {
    const T scaled = (x[c] - mean) / largest;
    scaled_squares += scaled * scaled;
  }
  return static_cast<T>(1) /
         (largest * std::sqrt(scaled_squares / static_cast<T>(channels) + static_cast<T>(eps / largest / largest)));
}

// One row forward: x (C) -> y (C), returning its mean and rstd. The kernel
// under layer_norm, and the fused decode step's (models/gpt_decode.cpp): same numbers.
template <class T>
inline RowMoments<T> layer_norm_row(const T* x, const T* weight, const T* bias, T* y, int64_t channels, double eps) {
  // The mean is taken about the row's first value: mean = x_0 + mean(x - x_0).
  // Summing x itself in T rounds at the size of the values (ulp(C * x), up to
  // ~1e-3 for values near 1000), and the deviations that leaves, divided by a
  // small sqrt(var + eps), made a constant row come out at -0.06 instead of 0.
  // Shifted, a constant row sums exact zeros, so its deviations are exactly 0,
  // and a row near any constant sums only its small differences.
  const T shift = channels > 0 ? x[0] : T(0);
  T shifted_sum = 0;
#pragma omp simd reduction(+ : shifted_sum)
  for (int64_t c = 0; c < channels; ++c) shifted_sum += x[c] - shift;
  const T mean = shift + shifted_sum / static_cast<T>(channels);
  // Two passes (mean, then squared deviations) rather than E[x^2] - E[x]^2,
  // which cancels catastrophically when |mean| >> std. The row is in L1 anyway.
  T squares = 0;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < channels; ++c) squares += (x[c] - mean) * (x[c] - mean);
  const T rstd = squares > std::numeric_limits<T>::max()
                     ? rstd_of_overflowing_row(x, mean, channels, eps)
                     : static_cast<T>(1) / std::sqrt(squares / static_cast<T>(channels) + static_cast<T>(eps));
#pragma omp simd
  for (int64_t c = 0; c < channels; ++c) y[c] = std::fma((x[c] - mean) * rstd, weight[c], bias[c]);
  return {mean, rstd};
}

// One row backward: dy (C), x (C), weight (C), the row's mean and rstd -> dx (C)
// when not null; dweight_sum and dbias_sum (C), when not null, get this row's
// dy * xhat and dy added.
template <class T>
inline void layer_norm_backward_row(const T* dy, const T* x, const T* weight, T mean, T rstd, T* dx, T* dweight_sum,
                                    T* dbias_sum, int64_t channels) {
  if (dx && channels == 1) {
    // One channel: xhat is 0 whatever x is, so y = bias and dx = 0 exactly. The general
    // formula's dxhat - mean(dxhat) is 0 only if both round alike, which an FMA breaks.
    dx[0] = 0;
  } else if (dx) {
    T sum_dxhat = 0, sum_dxhat_xhat = 0;
#pragma omp simd reduction(+ : sum_dxhat, sum_dxhat_xhat)
    for (int64_t c = 0; c < channels; ++c) {
      const T dxhat = dy[c] * weight[c];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * ((x[c] - mean) * rstd);
    }
    const T mean_dxhat = sum_dxhat / static_cast<T>(channels);
    const T mean_dxhat_xhat = sum_dxhat_xhat / static_cast<T>(channels);
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) {
      const T xhat = (x[c] - mean) * rstd;
      dx[c] = rstd * (dy[c] * weight[c] - mean_dxhat - xhat * mean_dxhat_xhat);
    }
  }
  if (dweight_sum) {
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) dweight_sum[c] += dy[c] * ((x[c] - mean) * rstd);
  }
  if (dbias_sum) {
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) dbias_sum[c] += dy[c];
  }
}

// x (N, C), weight (C), bias (C) -> y (N, C), mean (N), rstd (N)
template <class T>
void layer_norm_forward_kernel(const T* x, const T* weight, const T* bias, T* y, T* mean, T* rstd, int64_t rows,
                               int64_t channels, double eps) {
#pragma omp parallel for schedule(static) if (rows * channels >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const RowMoments<T> moments =
        layer_norm_row(x + row * channels, weight, bias, y + row * channels, channels, eps);
    mean[row] = moments.mean;
    rstd[row] = moments.rstd;
  }
}

// dy (N, C), x (N, C), weight (C), mean (N), rstd (N)
//   -> dx (N, C) (when not null), dweight (C) and dbias (C) (each when not null; overwritten)
//
// dweight and dbias sum over the rows: the rows are cut into kSumChunks runs of
// neighbouring rows, whatever the number of threads; each run's sums go to
// its own slice, and the slices are added in run order. So the sums, and a
// whole training step, come out the same on any number of threads.
inline constexpr int64_t kSumChunks = 64;

template <class T>
void layer_norm_backward_kernel(const T* dy, const T* x, const T* weight, const T* mean, const T* rstd, T* dx,
                                T* dweight, T* dbias, int64_t rows, int64_t channels) {
  const bool parallel = rows * channels >= kParallelThreshold;
  const int64_t chunks = std::min(kSumChunks, std::max<int64_t>(rows, 1));
  std::vector<T> partial_dweight(dweight ? chunks * channels : 0, T(0));
  std::vector<T> partial_dbias(dbias ? chunks * channels : 0, T(0));
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      T* chunk_dweight = dweight ? partial_dweight.data() + chunk * channels : nullptr;
      T* chunk_dbias = dbias ? partial_dbias.data() + chunk * channels : nullptr;
      for (int64_t row = rows * chunk / chunks; row < rows * (chunk + 1) / chunks; ++row)
        layer_norm_backward_row(dy + row * channels, x + row * channels, weight, mean[row], rstd[row],
                                dx ? dx + row * channels : nullptr, chunk_dweight, chunk_dbias, channels);
    }
#pragma omp for schedule(static)
    for (int64_t c = 0; c < channels; ++c) {
      T weight_sum = 0, bias_sum = 0;
      for (int64_t chunk = 0; chunk < chunks; ++chunk) {
        if (dweight) weight_sum += partial_dweight[chunk * channels + c];
        if (dbias) bias_sum += partial_dbias[chunk * channels + c];
      }
      if (dweight) dweight[c] = weight_sum;
      if (dbias) dbias[c] = bias_sum;
    }
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
