#include "tinygpt/tensor/cpu/gemm.h"

#include <cblas.h>

namespace tg::cpu {

namespace {

CBLAS_TRANSPOSE flag(bool transpose) { return transpose ? CblasTrans : CblasNoTrans; }

int blas_int(int64_t value) { return static_cast<int>(value); }

}  // namespace

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, flag(transpose_a), flag(transpose_b), blas_int(m), blas_int(n), blas_int(k), alpha, a,
              blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}

void gemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, flag(transpose_a), flag(transpose_b), blas_int(m), blas_int(n), blas_int(k), alpha, a,
              blas_int(lda), b, blas_int(ldb), beta, c, blas_int(ldc));
}

}  // namespace tg::cpu
