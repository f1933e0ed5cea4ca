// Differentiable product with a weight stored as Linear stores it, (out, in):
//
//   y (N, out) = x (N, in) @ W^T + b              forward (b (out), optional)
//   dx (N, in)  = dy (N, out) @ W (out, in)        backward
//   dW (out, in) = dy^T (out, N) @ x (N, in)
//   db (out)    = dy summed over its N rows
//
// The bias goes in first: y starts as N copies of b and the GEMM adds the
// product onto it (beta = 1), instead of BLAS zeroing y and a later pass adding
// b: one pass over y fewer (measured in docs/performance.md, "The measurements
// behind the kernels' constants").
//
// matmul(x, transpose(W)) computes the same, but its backward makes dW^T, a
// fresh (in, out) buffer that a transpose then adds into W's gradient with a
// strided pass. Here dW comes out in W's own layout and, when W's gradient
// buffer exists (a ParameterArena's parameters), is added into it by the GEMM
// itself (beta = 1, autograd/node.h: leaf_grad_buffer): no fresh buffer and
// no strided pass per weight, a large share of a big model's step
// (docs/performance.md).
//
// profile_role: the profile's GEMM row (as for matmul, autograd/matmul_op.h).
//
// matmul_dtype bfloat16 (float32 x and W only; the default float32 means the
// operands' own type) is mixed-precision training: x,
// W and dy are rounded to bfloat16 for the three products, which sum in
// float32 (tensor/cpu/gemm_bf16.h: AVX512-BF16 where the CPU has it), and the
// backward keeps x and W in bfloat16, half the bytes. The parameters, their
// gradients and the optimiser stay float32.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg {

Tensor linear_product(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* profile_role = nullptr,
                      DType matmul_dtype = DType::Float32);
Tensor linear_product(const Tensor& x, const Tensor& weight, const char* profile_role = nullptr,
                      DType matmul_dtype = DType::Float32);  // no bias

}  // namespace tg
