// GELU: forward and backward kernels, and the op.
//
// Tanh form, rewritten without tanh: since 0.5 (1 + tanh(u)) = sigmoid(2u) = 1 / (1 + exp(-2u)),
//
//   gelu(x)  = x * s,                          s = 1 / (1 + e),  e = exp(-2u)
//   gelu'(x) = s + x * 2 s (1 - s) * du/dx,     du/dx = sqrt(2/pi) (1 + 3 * 0.044715 x^2)
//
// and s (1 - s) = e s^2 exactly, which avoids the cancellation of 1 - s when s ~ 1.
// One exp_fast per element (vectorised; see vector_math.h) instead of a tanh call.
//
// Erf form:
//   gelu(x)  = x * Phi(x),   Phi(x) = 0.5 (1 + erf(x / sqrt 2))
//   gelu'(x) = Phi(x) + x * phi(x),   phi(x) = exp(-x^2 / 2) / sqrt(2 pi)
// std::erf does not vectorise, so this form is slower than the tanh one (it is
// not GPT-2's; it is here for models that ask for the exact GELU).
#include "nn/functional/gelu.h"

#include <cmath>
#include <numbers>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/vector_math.h"
#include "tensor/elementwise.h"
#include "tensor/threads.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

constexpr double kInvSqrt2Pi = 0.3989422804014327;  // 1 / sqrt(2 pi)

// x (n) -> y (n)
template <class T>
void gelu_forward_kernel(const T* x, T* y, int64_t count, GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) y[i] = gelu_tanh_value(x[i]);
  } else {
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) y[i] = gelu_erf_value(x[i]);
  }
}

// dy (n), x (n) -> dx (n)
template <class T>
void gelu_backward_kernel(const T* dy, const T* x, T* dx, int64_t count, GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) {
      const T value = x[i];
      const T square = value * value;
      const T u = static_cast<T>(kGeluSqrt2OverPi) * (value + static_cast<T>(kGeluCubicCoefficient) * square * value);
      const T du_dx = static_cast<T>(kGeluSqrt2OverPi) * (1 + static_cast<T>(3 * kGeluCubicCoefficient) * square);
      // Capped so that e stays finite: otherwise e * s * s = inf * 0 = NaN far in the
      // negative tail, where the true slope is ~1e-35 anyway.
      const T minus_two_u = static_cast<T>(-2) * u;
      const T e = exp_fast(minus_two_u > static_cast<T>(80) ? static_cast<T>(80) : minus_two_u);
      const T s = static_cast<T>(1) / (1 + e);
      dx[i] = dy[i] * (s + value * (2 * e * s * s) * du_dx);
    }
  } else {
#pragma omp parallel for schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) {
      const T value = x[i];
      const T cdf = static_cast<T>(0.5) * (1 + std::erf(value * static_cast<T>(kGeluInvSqrt2)));
      const T pdf = static_cast<T>(kInvSqrt2Pi) * std::exp(static_cast<T>(-0.5) * value * value);
      dx[i] = dy[i] * (cdf + value * pdf);
    }
  }
}

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
  return record("erf", {x}, y, [x = x.detach()](const Tensor& dy, const std::vector<bool>&) {
    const Tensor derivative = raw::mul(raw::exp(raw::neg(raw::mul(x, x))), 2 / std::sqrt(std::numbers::pi));
    return std::vector<Tensor>{raw::mul(dy, derivative)};
  });
}

}  // namespace

Tensor gelu(const Tensor& x, GeluApproximation approximation) {
  const char* name = gelu_name(approximation);
  check(is_floating(x.dtype()), name, ": needs a floating-point tensor, got ", dtype_name(x.dtype()), " of shape ",
        x.shape());
  const Tensor x_contiguous = raw::contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), name, [&]<class T>() {
    gelu_forward_kernel<T>(x_contiguous.data<T>(), y.data<T>(), x.numel(), approximation);
  });
  return record(name, {x}, y, [x = x_contiguous.detach(), approximation](const Tensor& dy, const std::vector<bool>&) {
    const Tensor dy_contiguous = raw::contiguous(dy);
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    visit_floating(x.dtype(), "gelu backward", [&]<class T>() {
      gelu_backward_kernel<T>(dy_contiguous.data<T>(), x.data<T>(), dx.data<T>(), x.numel(), approximation);
    });
    return std::vector<Tensor>{dx};
  });
}

Tensor gelu_reference(const Tensor& x, GeluApproximation approximation) {
  if (approximation == GeluApproximation::Tanh) {
    const Tensor u = kGeluSqrt2OverPi * (x + kGeluCubicCoefficient * x * x * x);
    return 0.5 * x * (1.0 + tg::tanh(u));
  }
  return 0.5 * x * (1.0 + erf_op(x * kGeluInvSqrt2));
}

}  // namespace tg::nn
