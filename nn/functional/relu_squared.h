// ReLU squared, the activation of nanochat's and modded-nanogpt's MLP (So et al.
// 2021, "Primer"):
//
//   x (...) -> y (...),   y = relu(x)^2 = max(x, 0)^2
//
// Float32 or float64. The kernels, forward and backward side by side:
// tensor/cpu/gated_activation_kernels.h.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor relu_squared(const Tensor& x);
// The same composed of autograd ops (where, gt, mul).
Tensor relu_squared_reference(const Tensor& x);

}  // namespace tg::nn
