#include "tinygpt/tensor/cpu/gemm_bf16.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemm_bf16_avx512_bf16.h"
#include "tinygpt/tensor/cpu/widened_panels.h"
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

// Widens rows [first, first + count) of op(x) (op(x) = x, or x^T with transpose)
// to float32, as stored: (count, cols) rows of x, or the (cols, count) block of
// columns of x^T. Returns the widened block's leading dimension.
int64_t widen_rows_of(bool transpose, const bfloat16* x, int64_t ldx, int64_t first, int64_t count, int64_t cols,
                      float* out) {
  if (!transpose) {
    bfloat16_to_float_rows(count, cols, x + first * ldx, ldx, out, cols);
    return cols;
  }
  bfloat16_to_float_rows(cols, count, x + first, ldx, out, count);
  return count;
}

// The fallback: the operands widened to float32 (exactly), then cblas_sgemm.
// The longer side of c, op(a)'s rows or op(b)'s columns, is widened a panel
// at a time into each thread's own buffer, and the other operand whole, once.
// Widening both whole into fresh memory ran baby's backward products at 0.6x
// sgemm's speed, and held a float32 copy of the LM head's weight.
void gemm_via_sgemm(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const bfloat16* a,
                    int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const bool panels_of_a = m > n;  // else panels of op(b)'s columns: rows of op(b)^T
  const int64_t rows = panels_of_a ? m : n;
  const int64_t panel_rows = widened_panel_rows(rows, k), panels = (rows + panel_rows - 1) / panel_rows;
  // The other operand, whole: op(b) (k, n) or op(a) (m, k) as stored.
  std::vector<float> whole(static_cast<size_t>(panels_of_a ? k * n : m * k));
  const int64_t ld_whole = panels_of_a ? widen_rows_of(!transpose_b, b, ldb, 0, n, k, whole.data())
                                       : widen_rows_of(transpose_a, a, lda, 0, m, k, whole.data());
#pragma omp parallel if (panels > 1)
  {
    std::vector<float> panel(static_cast<size_t>(panel_rows * k));
#pragma omp for schedule(dynamic, 1)
    for (int64_t index = 0; index < panels; ++index) {
      const int64_t first = index * panel_rows, count = std::min(panel_rows, rows - first);
      if (panels_of_a) {  // c[first : first + count, :] (count, n) = op(a)[first : first + count, :] @ op(b)
        const int64_t ld_panel = widen_rows_of(transpose_a, a, lda, first, count, k, panel.data());
        gemm(transpose_a, transpose_b, count, n, k, alpha, panel.data(), ld_panel, whole.data(), ld_whole, beta,
             c + first * ldc, ldc);
      } else {  // c[:, first : first + count] (m, count) = op(a) @ op(b)[:, first : first + count]
        const int64_t ld_panel = widen_rows_of(!transpose_b, b, ldb, first, count, k, panel.data());
        gemm(transpose_a, transpose_b, m, count, k, alpha, whole.data(), ld_whole, panel.data(), ld_panel, beta,
             c + first, ldc);
      }
    }
  }
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
