// Root-mean-square normalisation over the last dim (Zhang & Sennrich 2019), as
// Llama's and Hugging Face's LlamaRMSNorm:
//
//   rstd = 1 / sqrt((1/C) sum_c x_c^2 + eps)      y_c = (x_c * rstd) * weight_c
//
// x (..., C), weight (C) or an undefined Tensor for none (nanochat) -> y (..., C).
// Float32 or float64 (x and weight alike). Unlike LayerNorm, the mean is not
// subtracted and there is no bias: one statistic per row instead of two.
//
// The kernels, forward and backward side by side: tensor/cpu/rms_norm_kernels.h.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

// The fused op: one pass per row forward, one pass per row backward (the kernels).
Tensor rms_norm(const Tensor& x, const Tensor& weight, double eps = 1e-6);
// The same function composed of autograd ops (mul, mean, add, pow): the clear
// version tests compare against and the step-through shows.
Tensor rms_norm_reference(const Tensor& x, const Tensor& weight, double eps = 1e-6);

}  // namespace tg::nn
