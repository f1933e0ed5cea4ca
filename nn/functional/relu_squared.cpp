// ReLU squared: the op (its checks, the recorded backward) and its reference
// composition. The kernels: tensor/cpu/gated_activation_kernels.h.
#include "tinygpt/nn/functional/relu_squared.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

void check_argument(const Tensor& x) {
  check(is_floating(x.dtype()), "relu_squared: needs a floating-point tensor, got ", dtype_name(x.dtype()),
        " of shape ", x.shape());
}

}  // namespace

Tensor relu_squared(const Tensor& x) {
  ProfileScope scope(ProfileFamily::relu_squared);
  check_argument(x);
  const Tensor x_contiguous = raw::contiguous(x);
  Tensor y = Tensor::empty(x.shape(), x.dtype());
  visit_floating(x.dtype(), "relu_squared", [&]<class T>() {
    cpu::functional_kernels<T>().relu_squared_forward(x_contiguous.data<T>(), y.data<T>(), x.numel());
  });
  scope.add_bytes_of(x, y);
  return record("relu_squared", {x}, y, [x = x_contiguous.detach()](const Tensor& dy, const Needs&) {
    ProfileScope scope(ProfileFamily::relu_squared);
    const Tensor dy_contiguous = raw::contiguous(dy);
    Tensor dx = Tensor::empty(x.shape(), x.dtype());
    visit_floating(x.dtype(), "relu_squared backward", [&]<class T>() {
      cpu::functional_kernels<T>().relu_squared_backward(dy_contiguous.data<T>(), x.data<T>(), dx.data<T>(), x.numel());
    });
    scope.add_bytes_of(dy, x, dx);
    return Grads{dx};
  }, {x_contiguous});
}

Tensor relu_squared_reference(const Tensor& x) {
  check_argument(x);
  const Tensor positive = tg::where(tg::gt(x, zeros({}, x.dtype())), x, zeros({}, x.dtype()));
  return positive * positive;
}

}  // namespace tg::nn
