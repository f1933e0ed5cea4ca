// Layer normalisation over the last dim (Ba, Kiros, Hinton 2016), as torch.nn.functional.layer_norm:
//
//   mean = (1/C) sum_c x_c        var = (1/C) sum_c (x_c - mean)^2   (biased, as torch)
//   y_c  = (x_c - mean) / sqrt(var + eps) * weight_c + bias_c
//
// x (..., C), weight (C), bias (C) -> y (..., C). Float32 or float64 (all three alike).
//
// The kernels, forward and backward side by side: tensor/cpu/layer_norm_kernels.h.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

// The fused op: one pass per row forward, one pass per row backward (the kernels).
Tensor layer_norm(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);
// The same function composed of autograd ops (mean, sub, mul, sqrt, ...): the
// clear version tests compare against and the step-through shows.
Tensor layer_norm_reference(const Tensor& x, const Tensor& weight, const Tensor& bias, double eps = 1e-5);

}  // namespace tg::nn
