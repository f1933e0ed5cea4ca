// RMSNorm's kernels, forward then backward (the op, its checks and its
// reference composition: nn/functional/rms_norm.h).
//
// Shapes: N rows (every leading dim of x flattened), C channels (the last dim).
//
// Forward, per row:   x (C), weight (C) or none -> y (C), rstd
//
//   rstd = 1 / sqrt((1/C) sum_c x_c^2 + eps)      y_c = (x_c * rstd) * weight_c
//
// Unlike LayerNorm nothing is subtracted: the row is only rescaled to unit root
// mean square. Without a weight (nanochat), y_c = x_c * rstd.
//
// Backward, per row:  dy (C), x (C), weight (C), rstd -> dx (C); dweight (C) summed over rows.
// With xhat = x * rstd and dxhat = dy * weight (dy without a weight),
// d rstd / d x_c = -rstd^3 x_c / C gives
//
//   dx_c     = rstd * (dxhat_c - xhat_c * mean_c'(dxhat * xhat))
//   dweight += dy * xhat
//
// so the forward saves rstd (N) and the backward needs one pass per row.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tinygpt/tensor/cpu/layer_norm_kernels.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h); callers outside the kernel table get the AVX2 one.
inline namespace TG_ISA {

// One row forward: x (C), weight (C) or null -> y (C), returning its rstd. The
// kernel under rms_norm, and the fused decode step's: same numbers.
template <class T>
inline T rms_norm_row(const T* x, const T* weight, T* y, int64_t channels, double eps) {
  T squares = 0;
#pragma omp simd reduction(+ : squares)
  for (int64_t c = 0; c < channels; ++c) squares += x[c] * x[c];
  // Squares past T's range: the overflow-safe rstd of LayerNorm's kernel, about a mean of 0.
  const T rstd = squares > std::numeric_limits<T>::max()
                     ? rstd_of_overflowing_row(x, static_cast<T>(0), channels, eps)
                     : static_cast<T>(1) / std::sqrt(squares / static_cast<T>(channels) + static_cast<T>(eps));
  if (weight) {
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) y[c] = (x[c] * rstd) * weight[c];
  } else {
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) y[c] = x[c] * rstd;
  }
  return rstd;
}

// One row backward: dy (C), x (C), weight (C) or null, the row's rstd -> dx (C)
// when not null; dweight_sum (C), when not null, gets this row's dy * xhat added.
template <class T>
inline void rms_norm_backward_row(const T* dy, const T* x, const T* weight, T rstd, T* dx, T* dweight_sum,
                                  int64_t channels) {
  if (dx) {
    T sum_dxhat_xhat = 0;
#pragma omp simd reduction(+ : sum_dxhat_xhat)
    for (int64_t c = 0; c < channels; ++c) sum_dxhat_xhat += (weight ? dy[c] * weight[c] : dy[c]) * (x[c] * rstd);
    const T mean_dxhat_xhat = sum_dxhat_xhat / static_cast<T>(channels);
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c)
      dx[c] = rstd * ((weight ? dy[c] * weight[c] : dy[c]) - (x[c] * rstd) * mean_dxhat_xhat);
  }
  if (dweight_sum) {
#pragma omp simd
    for (int64_t c = 0; c < channels; ++c) dweight_sum[c] += dy[c] * (x[c] * rstd);
  }
}

// x (N, C), weight (C) or null -> y (N, C), rstd (N)
template <class T>
void rms_norm_forward_kernel(const T* x, const T* weight, T* y, T* rstd, int64_t rows, int64_t channels, double eps) {
#pragma omp parallel for schedule(static) if (rows * channels >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row)
    rstd[row] = rms_norm_row(x + row * channels, weight, y + row * channels, channels, eps);
}

// dy (N, C), x (N, C), weight (C) or null, rstd (N) -> dx (N, C) (when not null),
// dweight (C) (when not null; overwritten). dweight sums over the rows in
// kSumChunks runs whatever the number of threads, as LayerNorm's backward does,
// so it comes out the same on any number of threads.
template <class T>
void rms_norm_backward_kernel(const T* dy, const T* x, const T* weight, const T* rstd, T* dx, T* dweight, int64_t rows,
                              int64_t channels) {
  const bool parallel = rows * channels >= kParallelThreshold;
  const int64_t chunks = std::min(kSumChunks, std::max<int64_t>(rows, 1));
  std::vector<T> partial_dweight(dweight ? chunks * channels : 0, T(0));
#pragma omp parallel if (parallel)
  {
#pragma omp for schedule(static)
    for (int64_t chunk = 0; chunk < chunks; ++chunk) {
      T* chunk_dweight = dweight ? partial_dweight.data() + chunk * channels : nullptr;
      for (int64_t row = rows * chunk / chunks; row < rows * (chunk + 1) / chunks; ++row)
        rms_norm_backward_row(dy + row * channels, x + row * channels, weight, rstd[row],
                              dx ? dx + row * channels : nullptr, chunk_dweight, channels);
    }
    if (dweight) {
#pragma omp for schedule(static)
      for (int64_t c = 0; c < channels; ++c) {
        T weight_sum = 0;
        for (int64_t chunk = 0; chunk < chunks; ++chunk) weight_sum += partial_dweight[chunk * channels + c];
        dweight[c] = weight_sum;
      }
    }
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
