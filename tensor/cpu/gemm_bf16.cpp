#include "tinygpt/tensor/cpu/gemm_bf16.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemm_bf16_avx512_bf16.h"
#include "tinygpt/tensor/runtime/isa.h"

namespace tg::cpu {

namespace {

void check_arguments(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                     int64_t ldc) {
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  check(m >= 0 && n >= 0 && k >= 0 && m <= kIntMax && n <= kIntMax && k <= kIntMax,
        "gemm_bf16: sizes must be in [0, 2^31), got m=", m, ", n=", n, ", k=", k);
  // Each operand as stored: its rows' length, which its leading dimension must cover.
  const int64_t a_row = transpose_a ? m : k, b_row = transpose_b ? k : n;
  check(lda >= std::max<int64_t>(1, a_row) && lda <= kIntMax, "gemm_bf16: lda=", lda, " must be at least the ", a_row,
        " elements of a stored row", transpose_a ? " (a transposed)" : "");
  check(ldb >= std::max<int64_t>(1, b_row) && ldb <= kIntMax, "gemm_bf16: ldb=", ldb, " must be at least the ", b_row,
        " elements of a stored row", transpose_b ? " (b transposed)" : "");
  check(ldc >= std::max<int64_t>(1, n) && ldc <= kIntMax, "gemm_bf16: ldc=", ldc, " must be at least n=", n);
}

// c (m, n) = beta * c, with beta == 0 writing zeros over whatever c held.
void scale_rows(int64_t m, int64_t n, float beta, float* c, int64_t ldc) {
  for (int64_t row = 0; row < m; ++row)
    for (int64_t col = 0; col < n; ++col) c[row * ldc + col] = beta == 0.0f ? 0.0f : beta * c[row * ldc + col];
}

// The fallback: both operands widened to float32, as stored (rows, cols), then cblas_sgemm.
void gemm_via_sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const bfloat16* a,
                    int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const int64_t a_rows = transpose_a ? k : m, a_cols = transpose_a ? m : k;
  const int64_t b_rows = transpose_b ? n : k, b_cols = transpose_b ? k : n;
  std::vector<float> a_float(static_cast<size_t>(a_rows * a_cols)), b_float(static_cast<size_t>(b_rows * b_cols));
  bfloat16_to_float_rows(a_rows, a_cols, a, lda, a_float.data(), a_cols);
  bfloat16_to_float_rows(b_rows, b_cols, b, ldb, b_float.data(), b_cols);
  gemm(transpose_a, transpose_b, m, n, k, alpha, a_float.data(), a_cols, b_float.data(), b_cols, beta, c, ldc);
}

}  // namespace

Bf16GemmKernel bf16_gemm_kernel() {
  static const Bf16GemmKernel kernel = active_isa() == Isa::avx512 && cpu_has_avx512_bf16()
                                           ? Bf16GemmKernel::avx512_bf16
                                           : Bf16GemmKernel::float32_sgemm;
  return kernel;
}

const char* bf16_gemm_kernel_name(Bf16GemmKernel kernel) {
  return kernel == Bf16GemmKernel::avx512_bf16 ? "AVX512-BF16" : "float32 sgemm";
}

void gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const bfloat16* a,
               int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_bf16(bf16_gemm_kernel(), transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm_bf16(Bf16GemmKernel kernel, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha,
               const bfloat16* a, int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  check(kernel != Bf16GemmKernel::avx512_bf16 || cpu_has_avx512_bf16(),
        "gemm_bf16: the AVX512-BF16 kernel was asked for, but this CPU lacks AVX512-BF16");
  check_arguments(transpose_a, transpose_b, m, n, k, lda, ldb, ldc);
  if (m == 0 || n == 0) return;
  if (k == 0 || alpha == 0.0f) {  // as BLAS: neither a nor b is read
    scale_rows(m, n, beta, c, ldc);
    return;
  }
  if (kernel == Bf16GemmKernel::avx512_bf16)
    isa_avx512_bf16::gemm_bf16(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  else
    gemm_via_sgemm(transpose_a, transpose_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace tg::cpu
