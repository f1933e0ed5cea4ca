// GELU: the op (its checks, the recorded backward) and its reference
// composition. The kernels, with the formulas of both forms: tensor/cpu/gelu_kernels.h.
#include "tinygpt/nn/functional/gelu.h"

#include <cmath>
#include <numbers>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/gelu_kernels.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

const char* gelu_name(GeluApproximation approximation) {
  return approximation == GeluApproximation::Tanh ? "gelu(tanh)" : "gelu(erf)";
}

// erf as a differentiable op, for the reference composition only:
// d erf(x)/dx = 2 / sqrt(pi) exp(-x^2).
Tensor erf_op(const Tensor& x) {
  const Tensor x_contiguous = raw::contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), "erf", [&]<class T>() {
    const T* in = x_contiguous.data<T>();
    T* out = y.data<T>();
    for (int64_t i = 0; i < x.numel(); ++i) out[i] = std::erf(in[i]);
  });
  return record("erf", {x}, y, [x = x.detach()](const Tensor& dy, const Needs&) {
    const Tensor derivative = raw::mul(raw::exp(raw::neg(raw::mul(x, x))), 2 / std::sqrt(std::numbers::pi));
    return Grads{raw::mul(dy, derivative)};
  }, {x});
}

}  // namespace

Tensor gelu(const Tensor& x, GeluApproximation approximation) {
  ProfileScope scope(ProfileFamily::gelu);
  const char* name = gelu_name(approximation);
  check(is_floating(x.dtype()), name, ": needs a floating-point tensor, got ", dtype_name(x.dtype()), " of shape ",
        x.shape());
  const Tensor x_contiguous = raw::contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), name, [&]<class T>() {
    cpu::functional_kernels<T>().gelu_forward(x_contiguous.data<T>(), y.data<T>(), x.numel(), approximation);
  });
  scope.add_bytes_of(x, y);
  return record(name, {x}, y, [x = x_contiguous.detach(), approximation](const Tensor& dy, const Needs&) {
    ProfileScope scope(ProfileFamily::gelu);
    const Tensor dy_contiguous = raw::contiguous(dy);
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    visit_floating(x.dtype(), "gelu backward", [&]<class T>() {
      cpu::functional_kernels<T>().gelu_backward(dy_contiguous.data<T>(), x.data<T>(), dx.data<T>(), x.numel(), approximation);
    });
    scope.add_bytes_of(dy, x, dx);
    return Grads{dx};
  }, {x_contiguous});
}

Tensor gelu_reference(const Tensor& x, GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh) {
    const Tensor u = cpu::kGeluSqrt2OverPi * (x + cpu::kGeluCubicCoefficient * x * x * x);
    return 0.5 * x * (1.0 + tg::tanh(u));
  }
  return 0.5 * x * (1.0 + erf_op(x * cpu::kGeluInvSqrt2));
}

}  // namespace tg::nn
