// Differentiable matrix product (forward in tensor/matmul.h).
//   C = A @ B:  dA = dC @ B^T,  dB = A^T @ dC  (summed over broadcast batch dims)
//
// profile_role says what the product is for ("attn.qkv", a string literal): the
// profile's GEMM row of the forward and of the two backward products
// (tensor/runtime/profile.h). nullptr: the "unlabelled" row.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg {

Tensor matmul(const Tensor& a, const Tensor& b, const char* profile_role = nullptr);

}  // namespace tg
