// SwiGLU: the op (its checks, the recorded backward) and its reference
// composition. The kernels, with the formulas: tensor/cpu/gated_activation_kernels.h.
#include "tinygpt/nn/functional/swiglu.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

void check_argument(const Tensor& x) {
  check(x.dim() >= 1 && is_floating(x.dtype()) && x.size(-1) % 2 == 0,
        "swiglu: x must be floating (..., 2H), gate and up side by side, got ", dtype_name(x.dtype()), " of shape ",
        x.shape());
}

// (..., 2H) -> (..., H)
Shape halved(const Shape& shape) {
  Shape out = shape;
  out.back() /= 2;
  return out;
}

}  // namespace

Tensor swiglu(const Tensor& x) {
  ProfileScope scope(ProfileFamily::swiglu);
  check_argument(x);
  const int64_t hidden = x.size(-1) / 2;
  const int64_t rows = hidden == 0 ? 0 : x.numel() / (2 * hidden);
  const Tensor x_contiguous = raw::contiguous(x);
  Tensor y = Tensor::empty(halved(x.shape()), x.dtype());
  visit_floating(x.dtype(), "swiglu", [&]<class T>() {
    cpu::functional_kernels<T>().swiglu_forward(x_contiguous.data<T>(), y.data<T>(), rows, hidden);
  });
  scope.add_bytes_of(x, y);
  return record("swiglu", {x}, y, [x = x_contiguous.detach(), rows, hidden](const Tensor& dy, const Needs&) {
    ProfileScope scope(ProfileFamily::swiglu);
    const Tensor dy_contiguous = raw::contiguous(dy);
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    visit_floating(x.dtype(), "swiglu backward", [&]<class T>() {
      cpu::functional_kernels<T>().swiglu_backward(dy_contiguous.data<T>(), x.data<T>(), dx.data<T>(), rows, hidden);
    });
    scope.add_bytes_of(dy, x, dx);
    return Grads{dx};
  }, {x_contiguous});
}

Tensor swiglu_reference(const Tensor& x) {
  check_argument(x);
  const int64_t hidden = x.size(-1) / 2;
  const Tensor gate = tg::narrow(x, -1, 0, hidden);    // (..., H)
  const Tensor up = tg::narrow(x, -1, hidden, hidden);  // (..., H)
  return gate / (1.0 + tg::exp(-gate)) * up;
}

}  // namespace tg::nn
