// cpu::gemm_bf16 with VDPBF16PS (tensor/cpu/gemm_bf16.h), compiled with
// -mavx512bf16 (the top CMakeLists.txt): nothing here may run on a CPU without
// AVX512-BF16, so every function lives in isa_avx512_bf16 (tensor/runtime/isa.h).
//
//   c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c
//
// The operands are packed into panels of k-pairs and multiplied by an 8 x 48
// tile of VDPBF16PS, 24 accumulator registers (tensor/cpu/bf16_panels_avx512_bf16.h).
//
// Blocking: the k axis in blocks of kDepth values; for each, op(b)'s columns
// are packed once, kBlockCols at a time, into one buffer the threads share,
// and each thread packs blocks of up to kBlockRows rows of op(a) into its own.
// The threads share out (row block, group of B panels) tiles of c. While one
// B panel (kDepth x kCols, 36 KB) stays in L1, the A block (144 KB) streams
// through it from L2. k blocks of 384 rather than 256 measured 10-25% faster
// where k is 384 or 768 (the forward products of baby and gpt2): c is then
// read and written once or twice, not two or three times.
#include "tinygpt/tensor/cpu/gemm_bf16_avx512_bf16.h"

#include <omp.h>

#include <algorithm>
#include <vector>

#include "tinygpt/tensor/cpu/bf16_panels_avx512_bf16.h"

namespace tg::cpu::isa_avx512_bf16 {

namespace {

constexpr int kVectors = 3;                 // 16-float vectors per tile row
constexpr int kCols = 16 * kVectors;        // columns of c per tile: 48
constexpr int64_t kDepth = 384;             // k values per block (even: pairs never straddle two)
constexpr int64_t kBlockRows = 192;         // rows of op(a) per packed A block (a multiple of kRows)
constexpr int64_t kBlockCols = 64 * kCols;  // columns of op(b) per packed B buffer: 3072
// Below this many multiply-adds (m n k) the product runs on the calling thread.
constexpr double kParallelMultiplyAdds = 1 << 20;

// Rows per A block: at most kBlockRows, in a number of blocks that the threads
// share evenly (m = 512 on 2 threads: 4 blocks of 128, not 192, 192 and 128).
int64_t rows_per_block(int64_t m, int threads) {
  const int64_t blocks = threads * ceil_div(m, threads * kBlockRows);
  return ceil_div(ceil_div(m, blocks), kRows) * kRows;
}

}  // namespace

void gemm_bf16(bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k, float alpha, const bfloat16* a,
               int64_t lda, const bfloat16* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  const RowsOfK a_rows{a, lda, !transpose_a};    // op(a): (m, k)
  const RowsOfK b_columns{b, ldb, transpose_b};  // op(b)^T: (n, k)
  const int64_t max_pairs = ceil_div(std::min(k, kDepth), 2);
  std::vector<CacheLine> packed_b_lines(
      static_cast<size_t>(ceil_div(std::min(n, kBlockCols), kCols) * max_pairs * kCols / 16));
  Word* packed_b = words_of(packed_b_lines);

  const double multiply_adds = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
#pragma omp parallel if (multiply_adds >= kParallelMultiplyAdds)
  {
    const int threads = omp_get_num_threads();
    std::vector<CacheLine> packed_a_lines(
        static_cast<size_t>(ceil_div(ceil_div(std::min(m, kBlockRows), kRows) * max_pairs * kRows, 16)));
    Word* packed_a = words_of(packed_a_lines);
    const int64_t block_rows = rows_per_block(m, threads), row_blocks = ceil_div(m, block_rows);
    for (int64_t col0 = 0; col0 < n; col0 += kBlockCols) {
      const int64_t cols = std::min(kBlockCols, n - col0);
      const int64_t col_panels = ceil_div(cols, kCols);
      // Enough tiles for every thread even when op(a) is a single row block.
      const int64_t col_groups = std::min(col_panels, ceil_div(threads, row_blocks));
      for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
        const int64_t depth = std::min(kDepth, k - k0), pairs = ceil_div(depth, 2);
        const float block_beta = k0 == 0 ? beta : 1.0f;  // later blocks add to the first's sums
#pragma omp for schedule(static)
        for (int64_t panel = 0; panel < col_panels; ++panel)
          pack_panels(b_columns, col0 + panel * kCols, std::min<int64_t>(kCols, cols - panel * kCols), kCols, k0, depth,
                      packed_b + panel * pairs * kCols);
        int64_t packed_row_block = -1;  // which A block this thread's buffer holds
#pragma omp for collapse(2) schedule(dynamic, 1)
        for (int64_t row_block = 0; row_block < row_blocks; ++row_block)
          for (int64_t col_group = 0; col_group < col_groups; ++col_group) {
            const int64_t row0 = row_block * block_rows, rows = std::min(block_rows, m - row0);
            const int64_t row_panels = ceil_div(rows, kRows);
            if (packed_row_block != row_block) {
              pack_panels(a_rows, row0, rows, kRows, k0, depth, packed_a);
              packed_row_block = row_block;
            }
            const int64_t first_panel = col_group * col_panels / col_groups;
            const int64_t end_panel = (col_group + 1) * col_panels / col_groups;
            for (int64_t col_panel = first_panel; col_panel < end_panel; ++col_panel)
              for (int64_t row_panel = 0; row_panel < row_panels; ++row_panel) {
                const int64_t row = row0 + row_panel * kRows, col = col0 + col_panel * kCols;
                multiply_panels<kVectors>(pairs, packed_a + row_panel * pairs * kRows, packed_b + col_panel * pairs * kCols,
                                alpha, block_beta, c + row * ldc + col, ldc,
                                static_cast<int>(std::min<int64_t>(kRows, m - row)),
                                static_cast<int>(std::min<int64_t>(kCols, col0 + cols - col)));
              }
          }
      }
    }
  }
}

}  // namespace tg::cpu::isa_avx512_bf16
