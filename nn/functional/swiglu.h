// SwiGLU, the gated activation of Llama's and Qwen's MLP (Shazeer 2020,
// "GLU Variants Improve Transformer"):
//
//   x (..., 2H) = [gate | up]  ->  y (..., H),   y = silu(gate) * up,   silu(g) = g / (1 + exp(-g))
//
// One Linear makes gate and up side by side (the MLP's c_fc, rows [gate; up]),
// so the op reads both halves of one tensor. Float32 or float64.
// The kernels, forward and backward side by side: tensor/cpu/gated_activation_kernels.h.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor swiglu(const Tensor& x);
// The same composed of autograd ops (narrow, exp, div, mul).
Tensor swiglu_reference(const Tensor& x);

}  // namespace tg::nn
