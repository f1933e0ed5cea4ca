// Layer normalisation: forward and backward kernels over rows, and the op.
//
// Shapes: N rows (every leading dim of x flattened), C channels (the last dim).
//
// Backward. With xhat = (x - mean) * rstd, rstd = 1 / sqrt(var + eps) and
// dxhat = dy * weight, differentiating through mean and var gives, per row,
//
//   dx_c     = rstd * (dxhat_c - mean_c'(dxhat) - xhat_c * mean_c'(dxhat * xhat))
//   dweight  = sum over rows of dy * xhat
//   dbias    = sum over rows of dy
//
// so the forward saves mean and rstd (N each) and the backward needs one pass.
#include "nn/functional/layer_norm.h"

#include <omp.h>

#include <cmath>
#include <vector>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/threads.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

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
template <class T>
void layer_norm_backward_kernel(const T* dy, const T* x, const T* weight, const T* mean, const T* rstd, T* dx,
                                T* dweight, T* dbias, int64_t rows, int64_t channels) {
  const bool parallel = rows * channels >= kParallelThreshold;
  const int threads = parallel ? omp_get_max_threads() : 1;
  // Each thread sums dweight and dbias over its own rows into its own slice;
  // the slices are added in thread order afterwards (deterministic for a thread count).
  std::vector<T> partial_dweight(dweight ? threads * channels : 0, T(0));
  std::vector<T> partial_dbias(dbias ? threads * channels : 0, T(0));
#pragma omp parallel num_threads(threads) if (parallel)
  {
    const int thread = omp_get_thread_num();
    T* my_dweight = dweight ? partial_dweight.data() + thread * channels : nullptr;
    T* my_dbias = dbias ? partial_dbias.data() + thread * channels : nullptr;
#pragma omp for schedule(static)
    for (int64_t row = 0; row < rows; ++row) {
      const T* dy_row = dy + row * channels;
      const T* x_row = x + row * channels;
      const T row_mean = mean[row];
      const T row_rstd = rstd[row];
      if (dx) {
        T sum_dxhat = 0, sum_dxhat_xhat = 0;
#pragma omp simd reduction(+ : sum_dxhat, sum_dxhat_xhat)
        for (int64_t c = 0; c < channels; ++c) {
          const T dxhat = dy_row[c] * weight[c];
          sum_dxhat += dxhat;
          sum_dxhat_xhat += dxhat * ((x_row[c] - row_mean) * row_rstd);
        }
        const T mean_dxhat = sum_dxhat / static_cast<T>(channels);
        const T mean_dxhat_xhat = sum_dxhat_xhat / static_cast<T>(channels);
        T* dx_row = dx + row * channels;
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) {
          const T xhat = (x_row[c] - row_mean) * row_rstd;
          dx_row[c] = row_rstd * (dy_row[c] * weight[c] - mean_dxhat - xhat * mean_dxhat_xhat);
        }
      }
      if (my_dweight) {
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) my_dweight[c] += dy_row[c] * ((x_row[c] - row_mean) * row_rstd);
      }
      if (my_dbias) {
#pragma omp simd
        for (int64_t c = 0; c < channels; ++c) my_dbias[c] += dy_row[c];
      }
    }
  }
  for (int64_t c = 0; c < channels; ++c) {
    if (dweight) dweight[c] = 0;
    if (dbias) dbias[c] = 0;
  }
  for (int thread = 0; thread < threads; ++thread) {
    for (int64_t c = 0; c < channels; ++c) {
      if (dweight) dweight[c] += partial_dweight[thread * channels + c];
      if (dbias) dbias[c] += partial_dbias[thread * channels + c];
    }
  }
}

void check_arguments(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  check(x.dim() >= 1, "layer_norm: x must have at least one dim, got shape ", x.shape());
  const int64_t channels = x.size(-1);
  check(weight.shape() == Shape{channels} && bias.shape() == Shape{channels}, "layer_norm: x of shape ", x.shape(),
        " needs weight and bias of shape ", Shape{channels}, ", got ", weight.shape(), " and ", bias.shape());
  check(is_floating(x.dtype()) && weight.dtype() == x.dtype() && bias.dtype() == x.dtype(),
        "layer_norm: x, weight and bias must share one floating dtype, got ", dtype_name(x.dtype()), ", ",
        dtype_name(weight.dtype()), " and ", dtype_name(bias.dtype()));
}

}  // namespace

Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_arguments(x, weight, bias);
  const int64_t channels = x.size(-1);
  const int64_t rows = channels == 0 ? 0 : x.numel() / channels;
  const Tensor x_contiguous = raw::contiguous(x);
  const Tensor weight_contiguous = raw::contiguous(weight);
  const Tensor bias_contiguous = raw::contiguous(bias);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  Tensor mean = Tensor::empty({rows}, x.dtype());
  Tensor rstd = Tensor::empty({rows}, x.dtype());
  visit_floating(x.dtype(), "layer_norm", [&]<class T>() {
    layer_norm_forward_kernel<T>(x_contiguous.data<T>(), weight_contiguous.data<T>(), bias_contiguous.data<T>(),
                                 y.data<T>(), mean.data<T>(), rstd.data<T>(), rows, channels, eps);
  });
  return record("layer_norm", {x, weight, bias}, y,
                [x = x_contiguous.detach(), weight = weight_contiguous.detach(), mean, rstd, rows, channels](
                    const Tensor& dy, const std::vector<bool>& needs_grad) {
                  const Tensor dy_contiguous = raw::contiguous(dy);
                  Tensor dx = needs_grad[0] ? Tensor::empty(x.shape(), x.dtype()) : Tensor();
                  Tensor dweight = needs_grad[1] ? Tensor::empty({channels}, x.dtype()) : Tensor();
                  Tensor dbias = needs_grad[2] ? Tensor::empty({channels}, x.dtype()) : Tensor();
                  visit_floating(x.dtype(), "layer_norm backward", [&]<class T>() {
                    layer_norm_backward_kernel<T>(dy_contiguous.data<T>(), x.data<T>(), weight.data<T>(),
                                                  mean.data<T>(), rstd.data<T>(), dx.defined() ? dx.data<T>() : nullptr,
                                                  dweight.defined() ? dweight.data<T>() : nullptr,
                                                  dbias.defined() ? dbias.data<T>() : nullptr, rows, channels);
                  });
                  return std::vector<Tensor>{dx, dweight, dbias};
                });
}

Tensor layer_norm_reference(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps) {
  check_arguments(x, weight, bias);
  const Tensor mean = tg::mean(x, {-1}, /*keepdim=*/true);          // (..., 1)
  const Tensor centered = x - mean;                                   // (..., C)
  const Tensor variance = tg::mean(centered * centered, {-1}, true);  // (..., 1), biased
  const Tensor normalized = centered / tg::sqrt(variance + eps);      // (..., C)
  return normalized * weight + bias;
}

}  // namespace tg::nn
