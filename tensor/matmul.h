// Matrix products through BLAS (cblas_sgemm / cblas_dgemm).
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
// runs our own bandwidth-bound kernel, raw::gemv_rows (tensor/gemv.h).
#pragma once
#include "tensor/tensor.h"

namespace tg::raw {

Tensor matmul(const Tensor& a, const Tensor& b);

// out = alpha * a @ b + beta * out, for 2-D operands (out contiguous, 2-D).
// Lets backward passes accumulate into an existing gradient without a temporary.
void gemm_into(const Tensor& out, const Tensor& a, const Tensor& b, float alpha = 1, float beta = 0);

}  // namespace tg::raw
