// Matrix products, handed to BLAS through cpu::gemm (tensor/cpu/gemm.h).
//
//   (M, K) @ (K, N)           -> (M, N)
//   (..., M, K) @ (..., K, N) -> (..., M, N)   batch dims broadcast
//   1-D operands are treated as a row (left) or a column (right) vector and
//   that dim is dropped from the result, as in torch.matmul.
//
// A transposed view (e.g. transpose(w, 0, 1)) is handed to BLAS as a transpose
// flag with the original leading dimension: never copied. Only operands whose
// last two dims are neither row- nor column-major are made contiguous first.
// One float row times a transposed weight (batch-1 generation: x (1, C) @ W^T)
// runs our own bandwidth-bound kernel, cpu::gemv_rows (tensor/cpu/gemv.h).
// Its backward (autograd/matmul_op.cpp) is two more products through this
// function on transposed views, dA = dC @ B^T and dB = A^T @ dC: fresh tensors,
// which the autograd engine adds into any gradient already there.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

Tensor matmul(const Tensor& a, const Tensor& b);

}  // namespace tg::raw
