// The one door to BLAS's matrix product (cblas_sgemm / cblas_dgemm), on raw
// row-major pointers, in the precision of the operands:
//
//   c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c
//
// op(a) is a, element (i, p) at a[i * lda + p], or with transpose_a its
// transpose, element (i, p) at a[p * lda + i]; b likewise with ldb. Rows of c
// are ldc apart. BLAS's rule: each leading dimension is at least the row length
// as stored, and sizes fit in an int (callers check).
//
// Called by raw::matmul (tensor/matmul.cpp) and the attention kernels
// (tensor/cpu/attention_kernels.h). Inside an OpenMP parallel region the
// OpenMP build of OpenBLAS runs the call on the calling thread alone.
#pragma once
#include <cstdint>

namespace tg::cpu {

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc);

}  // namespace tg::cpu
