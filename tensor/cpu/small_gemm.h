// Small matrix products on the calling thread, without BLAS: attention's
// per-head products (tensor/cpu/attention_kernels.h).
//
//   c (m, n) = alpha * a (m, k) @ b (k, n) + beta * c
//
// a is read one element at a time through a row stride and a column stride,
// so a transposed a (stored (k, m): strides 1 and m) costs nothing; b and c
// have contiguous rows (SmallGemmStrides below). A b stored transposed is
// first turned around with transpose_rows.
//
// Why not BLAS: at attention's sizes (a head's 64 queries x 64 keys x 32 in
// cpu-small, and smaller blocks of queries to skip the masked keys) OpenBLAS
// spends as long packing both operands into its own layout as multiplying. Here
// they already sit in L1. A tile of c, kTileRows rows by kTileVectors vectors,
// stays in registers while k runs; each step loads kTileVectors vectors of b's
// row, broadcasts kTileRows elements of a and makes kTileRows * kTileVectors
// vector multiply-adds.
//
// Each element of c is one chain of fused multiply-adds over k in order
// 0..k-1, whatever m and n are, on any thread count and at any optimisation
// level: the same numbers wherever it is called.
#pragma once
#include <cmath>
#include <cstdint>

#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/cpu/simd.h"

namespace tg::cpu {

// Where small_gemm's operands keep their elements, in elements:
//   a's (i, p) at a[i * a_row + p * a_col]   (a transposed a, stored (k, m): a_row 1, a_col m)
//   b's (p, j) at b[p * b_row + j]
//   c's (i, j) at c[i * c_row + j]
// Named at the call, small_gemm(..., {.a_row = lda, .a_col = 1, .b_row = ldb, .c_row = ldc}),
// so that a's two strides cannot be swapped with b's or c's.
struct SmallGemmStrides {
  int64_t a_row, a_col, b_row, c_row;
};

// One copy per instruction set (tensor/runtime/isa.h): the kernel files inline their own.
inline namespace TG_ISA {

namespace small_gemm_tiles {

using simd::kLanes;
using simd::load;
using simd::store;
using simd::Vector;

#if defined(__AVX512F__)
inline constexpr int kTileRows = 8;  // zmm: 32 registers, 16 for c's tile
#else
inline constexpr int kTileRows = 6;  // ymm: 16 registers, 12 for c's tile
#endif
inline constexpr int kTileVectors = 2;
template <class T>
inline constexpr int64_t kTileColumns = kTileVectors * kLanes<T>;

// c (Rows, Vectors * kLanes) = alpha * a (Rows, k) @ b (k, Vectors * kLanes) + beta * c.
template <class T, int Rows, int Vectors>
void tile(int64_t k, T alpha, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b, int64_t ldb, T beta,
          T* c, int64_t ldc) {
  Vector<T> sums[Rows][Vectors];
#pragma GCC unroll 16
  for (int r = 0; r < Rows; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) sums[r][v] = Vector<T>{};
  for (int64_t p = 0; p < k; ++p) {
    Vector<T> b_row[Vectors];
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) b_row[v] = load(b + p * ldb + v * kLanes<T>);
#pragma GCC unroll 16
    for (int r = 0; r < Rows; ++r) {
      const Vector<T> a_value = simd::splat(a[r * a_row_stride + p * a_col_stride]);
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) sums[r][v] = simd::multiply_add<T>(a_value, b_row[v], sums[r][v]);
    }
  }
  // beta == 0 ignores what c held, even NaN, as BLAS does.
  const bool add_c = beta != T(0);
#pragma GCC unroll 16
  for (int r = 0; r < Rows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) {
      T* out = c + r * ldc + v * kLanes<T>;
      const Vector<T> product = alpha * sums[r][v];
      store(out, add_c ? simd::multiply_add<T>(simd::splat(beta), load(out), product) : product);
    }
  }
}

// The same for the last rows (fewer than kTileRows) of a column panel.
template <class T, int Vectors, int Rows = kTileRows - 1>
void last_rows_tile(int rows, int64_t k, T alpha, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b,
                    int64_t ldb, T beta, T* c, int64_t ldc) {
  if constexpr (Rows >= 1) {
    if (rows == Rows) return tile<T, Rows, Vectors>(k, alpha, a, a_row_stride, a_col_stride, b, ldb, beta, c, ldc);
    last_rows_tile<T, Vectors, Rows - 1>(rows, k, alpha, a, a_row_stride, a_col_stride, b, ldb, beta, c, ldc);
  }
}

// Every row of a panel of Vectors * kLanes columns, kTileRows at a time.
template <class T, int Vectors>
void panel(int64_t m, int64_t k, T alpha, const T* a, int64_t a_row_stride, int64_t a_col_stride, const T* b,
           int64_t ldb, T beta, T* c, int64_t ldc) {
  int64_t i = 0;
  for (; i + kTileRows <= m; i += kTileRows)
    tile<T, kTileRows, Vectors>(k, alpha, a + i * a_row_stride, a_row_stride, a_col_stride, b, ldb, beta, c + i * ldc,
                                ldc);
  if (i < m)
    last_rows_tile<T, Vectors>(static_cast<int>(m - i), k, alpha, a + i * a_row_stride, a_row_stride, a_col_stride, b,
                               ldb, beta, c + i * ldc, ldc);
}

// The last columns (fewer than kLanes) of every row, one element at a time.
template <class T>
void last_columns(int64_t m, int64_t columns, int64_t k, T alpha, const T* a, int64_t a_row_stride,
                  int64_t a_col_stride, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < columns; ++j) {
      T sum = 0;
      // std::fma, as the tiles' simd::multiply_add: the same bits as if a tile had computed it.
      for (int64_t p = 0; p < k; ++p) sum = std::fma(a[i * a_row_stride + p * a_col_stride], b[p * ldb + j], sum);
      T* out = c + i * ldc + j;
      *out = beta == T(0) ? alpha * sum : std::fma(beta, *out, alpha * sum);
    }
  }
}

}  // namespace small_gemm_tiles

// c (m, n) = alpha * a (m, k) @ b (k, n) + beta * c, the operands' elements
// where `strides` says. beta == 0 overwrites c. Column panels outside, rows
// inside: a panel of b stays in L1 while every row of a passes it. Panels are
// kTileVectors vectors wide, then one vector, then what is left one column at
// a time.
template <class T>
void small_gemm(int64_t m, int64_t n, int64_t k, T alpha, const T* a, const T* b, T beta, T* c,
                const SmallGemmStrides& strides) {
  using namespace small_gemm_tiles;
  const auto [a_row, a_col, b_row, c_row] = strides;
  int64_t j = 0;
  for (; j + kTileColumns<T> <= n; j += kTileColumns<T>)
    panel<T, kTileVectors>(m, k, alpha, a, a_row, a_col, b + j, b_row, beta, c + j, c_row);
  for (; j + kLanes<T> <= n; j += kLanes<T>)  // narrower panels, one vector wide
    panel<T, 1>(m, k, alpha, a, a_row, a_col, b + j, b_row, beta, c + j, c_row);
  if (j < n) last_columns(m, n - j, k, alpha, a, a_row, a_col, b + j, b_row, beta, c + j, c_row);
}

// to (cols, rows) = from (rows, cols) transposed; from's rows are from_stride
// apart, to's rows to_stride apart.
template <class T>
void transpose_rows(int64_t rows, int64_t cols, const T* from, int64_t from_stride, T* to, int64_t to_stride) {
  for (int64_t j = 0; j < cols; ++j) {
    T* to_row = to + j * to_stride;
#pragma omp simd
    for (int64_t i = 0; i < rows; ++i) to_row[i] = from[i * from_stride + j];  // a gather, then one store
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
