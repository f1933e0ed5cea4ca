// RMS normalisation: the op (its checks, the recorded backward) and its
// reference composition. The kernels, with the formulas: tensor/cpu/rms_norm_kernels.h.
#include "tinygpt/nn/functional/rms_norm.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

void check_arguments(const Tensor& x, const Tensor& weight, double eps) {
  check(x.dim() >= 1 && is_floating(x.dtype()), "rms_norm: x must be floating with at least one dim, got ",
        dtype_name(x.dtype()), " of shape ", x.shape());
  check(eps > 0, "rms_norm: eps must be positive, got ", eps);
  if (!weight.defined()) return;
  const int64_t channels = x.size(-1);
  check(weight.shape() == Shape{channels}, "rms_norm: x of shape ", x.shape(), " needs a weight of shape ",
        Shape{channels}, ", got ", weight.shape());
  check(weight.dtype() == x.dtype(), "rms_norm: x and weight must share one dtype, got ", dtype_name(x.dtype()),
        " and ", dtype_name(weight.dtype()));
}

template <class T>
const T* data_or_null(const Tensor& t) {
  return t.defined() ? t.data<T>() : nullptr;
}

}  // namespace

Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps) {
  ProfileScope scope(ProfileFamily::rms_norm);
  check_arguments(x, weight, eps);
  const int64_t channels = x.size(-1);
  const int64_t rows = channels == 0 ? 0 : x.numel() / channels;
  const Tensor x_contiguous = raw::contiguous(x);
  const Tensor weight_contiguous = weight.defined() ? raw::contiguous(weight) : Tensor();
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  Tensor rstd = Tensor::empty({rows}, x.dtype());
  visit_floating(x.dtype(), "rms_norm", [&]<class T>() {
    cpu::functional_kernels<T>().rms_norm_forward(x_contiguous.data<T>(), data_or_null<T>(weight_contiguous), y.data<T>(),
                                             rstd.data<T>(), rows, channels, eps);
  });
  scope.add_bytes_of(x, y, rstd);
  const std::vector<Tensor> inputs = weight.defined() ? std::vector<Tensor>{x, weight} : std::vector<Tensor>{x};
  const std::vector<Tensor> saved =
      weight.defined() ? std::vector<Tensor>{x_contiguous, weight_contiguous} : std::vector<Tensor>{x_contiguous};
  return record("rms_norm", inputs, y,
                [x = x_contiguous.detach(), weight = weight_contiguous.defined() ? weight_contiguous.detach() : Tensor(),
                 rstd, rows, channels](const Tensor& dy, const Needs& needs_grad) {
                  ProfileScope scope(ProfileFamily::rms_norm);
                  const Tensor dy_contiguous = raw::contiguous(dy);
                  Tensor dx = needs_grad[0] ? Tensor::empty(x.shape(), x.dtype()) : Tensor();
                  const bool weight_grad = weight.defined() && needs_grad[1];
                  Tensor dweight = weight_grad ? Tensor::empty({channels}, x.dtype()) : Tensor();
                  visit_floating(x.dtype(), "rms_norm backward", [&]<class T>() {
                    cpu::functional_kernels<T>().rms_norm_backward(dy_contiguous.data<T>(), x.data<T>(), data_or_null<T>(weight),
                                                              rstd.data<T>(), dx.defined() ? dx.data<T>() : nullptr,
                                                              dweight.defined() ? dweight.data<T>() : nullptr, rows,
                                                              channels);
                  });
                  scope.add_bytes_of(dy, x, rstd, dx, dweight);
                  return weight.defined() ? Grads{dx, dweight} : Grads{dx};
                }, saved);
}

Tensor rms_norm_reference(const Tensor& x, const Tensor& weight, double eps) {
  check_arguments(x, weight, eps);
  const Tensor mean_square = tg::mean(x * x, {-1}, /*keepdim=*/true);  // (..., 1)
  const Tensor normalized = x * tg::pow(mean_square + eps, -0.5);    // (..., C)
  return weight.defined() ? normalized * weight : normalized;
}

}  // namespace tg::nn
