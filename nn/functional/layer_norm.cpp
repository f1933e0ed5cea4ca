// Layer normalisation: the op (its checks, the recorded backward) and its
// reference composition. The kernels, with the formulas: tensor/cpu/layer_norm_kernels.h.
#include "tinygpt/nn/functional/layer_norm.h"

#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

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
  ProfileScope scope(ProfileFamily::layer_norm);
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
    cpu::functional_kernels<T>().layer_norm_forward(x_contiguous.data<T>(), weight_contiguous.data<T>(), bias_contiguous.data<T>(),
                                 y.data<T>(), mean.data<T>(), rstd.data<T>(), rows, channels, eps);
  });
  scope.add_bytes_of(x, weight, bias, y, mean, rstd);
  return record("layer_norm", {x, weight, bias}, y,
                [x = x_contiguous.detach(), weight = weight_contiguous.detach(), mean, rstd, rows, channels](
                    const Tensor& dy, const Needs& needs_grad) {
                  ProfileScope scope(ProfileFamily::layer_norm);
                  const Tensor dy_contiguous = raw::contiguous(dy);
                  Tensor dx = needs_grad[0] ? Tensor::empty(x.shape(), x.dtype()) : Tensor();
                  Tensor dweight = needs_grad[1] ? Tensor::empty({channels}, x.dtype()) : Tensor();
                  Tensor dbias = needs_grad[2] ? Tensor::empty({channels}, x.dtype()) : Tensor();
                  visit_floating(x.dtype(), "layer_norm backward", [&]<class T>() {
                    cpu::functional_kernels<T>().layer_norm_backward(dy_contiguous.data<T>(), x.data<T>(), weight.data<T>(),
                                                  mean.data<T>(), rstd.data<T>(), dx.defined() ? dx.data<T>() : nullptr,
                                                  dweight.defined() ? dweight.data<T>() : nullptr,
                                                  dbias.defined() ? dbias.data<T>() : nullptr, rows, channels);
                  });
                  scope.add_bytes_of(dy, x, weight, mean, rstd, dx, dweight, dbias);
                  return Grads{dx, dweight, dbias};
                }, {x_contiguous, weight_contiguous});
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
