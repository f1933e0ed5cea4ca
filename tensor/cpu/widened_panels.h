// Panels of a matrix widened to float32 for sgemm, one per thread at a time:
// the many-row products with bfloat16 or int8 weights (tensor/quantized_matmul.cpp)
// and the bfloat16 product on a CPU without AVX512-BF16 (tensor/cpu/gemm_bf16.cpp).
// Each thread widens `panel rows x row length` values into its own buffer and
// multiplies by it on its own (BLAS inside a parallel region runs on the calling thread).
#pragma once
#include <algorithm>
#include <cstdint>

namespace tg::cpu {

// Values a thread widens at a time: a panel of 128 rows of float32 for
// rows of 768 (384 KB), which stays in the core's L2 while BLAS reads it.
constexpr int64_t kWidenedPanelFloats = 96 * 1024;
// Never fewer rows: BLAS is slow on narrow products, and panels of 32 rows
// (rows of 3072) ran gpt2's mlp.proj at 0.8x the speed of 128.
constexpr int64_t kMinWidenedPanelRows = 128;

// Rows per panel of a (rows, row_length) matrix: about kWidenedPanelFloats
// values, at least kMinWidenedPanelRows rows, the panels of one size but the
// last. Fixed by the shape alone, never by the thread count: where OpenBLAS's
// sums depend on a call's size (its Haswell and Zen kernels), the same product
// then gives the same numbers on any number of threads.
inline int64_t widened_panel_rows(int64_t rows, int64_t row_length) {
  const int64_t target = std::min(std::max<int64_t>(1, rows),
                                  std::max(kMinWidenedPanelRows, kWidenedPanelFloats / std::max<int64_t>(1, row_length)));
  const int64_t panels = (rows + target - 1) / target;
  return (rows + panels - 1) / panels;
}

}  // namespace tg::cpu
