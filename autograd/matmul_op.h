// Differentiable matrix product (forward in tensor/matmul.h).
//   C = A @ B:  dA = dC @ B^T,  dB = A^T @ dC  (summed over broadcast batch dims)
#pragma once
#include "tensor/tensor.h"

namespace tg {

Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace tg
