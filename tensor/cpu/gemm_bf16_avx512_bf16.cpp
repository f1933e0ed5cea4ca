// cpu::gemm_bf16 with VDPBF16PS (tensor/cpu/gemm_bf16.h), compiled with
// -mavx512bf16 (the top CMakeLists.txt): nothing here may run on a CPU without
// AVX512-BF16, so every function lives in isa_avx512_bf16 (tensor/runtime/isa.h).
//
//   c (m, n) = alpha * op(a) (m, k) @ op(b) (k, n) + beta * c
//
// VDPBF16PS multiplies pairs: each 32-bit lane of its operands holds two
// bfloat16 of consecutive k, and it adds both products to the lane's float32
// sum. So the operands are first packed ("panels", as in GotoBLAS and BLIS),
// one 32-bit word per pair, low half k = 2p, high half k = 2p + 1:
//
//   A panel, kRows rows of op(a):    word [p][r] = (op(a)(i0 + r, 2p), op(a)(i0 + r, 2p + 1))
//   B panel, kCols columns of op(b): word [p][j] = (op(b)(2p, j0 + j), op(b)(2p + 1, j0 + j))
//
// Rows and columns past the matrix, and the partner of an odd k's last value,
// are packed as zeros, so the micro-kernel always computes a whole
// (kRows, kCols) tile and only its stores are masked. For each pair p it loads
// the B panel's row (3 vectors of 16 columns), broadcasts each A word to all
// lanes and issues 8 x 3 VDPBF16PS into 24 accumulator registers.
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

#include <immintrin.h>
#include <omp.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace tg::cpu::isa_avx512_bf16 {

namespace {

using Word = uint32_t;  // two bfloat16 of consecutive k

constexpr int kRows = 8;                    // rows of c per micro-kernel tile
constexpr int kVectors = 3;                 // 16-float vectors per tile row
constexpr int kCols = 16 * kVectors;        // columns of c per tile: 48
constexpr int64_t kDepth = 384;             // k values per block (even: pairs never straddle two)
constexpr int64_t kBlockRows = 192;         // rows of op(a) per packed A block (a multiple of kRows)
constexpr int64_t kBlockCols = 64 * kCols;  // columns of op(b) per packed B buffer: 3072
// Below this many multiply-adds (m n k) the product runs on the calling thread.
constexpr double kParallelMultiplyAdds = 1 << 20;

int64_t ceil_div(int64_t value, int64_t divisor) { return (value + divisor - 1) / divisor; }

// Rows per A block: at most kBlockRows, in a number of blocks that the threads
// share evenly (m = 512 on 2 threads: 4 blocks of 128, not 192, 192 and 128).
int64_t rows_per_block(int64_t m, int threads) {
  const int64_t blocks = threads * ceil_div(m, threads * kBlockRows);
  return ceil_div(ceil_div(m, blocks), kRows) * kRows;
}

// Packed words on 64-byte lines, so that each B panel row is one aligned load per vector.
struct alignas(64) CacheLine {
  Word words[16];
};

Word* words_of(std::vector<CacheLine>& lines) { return reinterpret_cast<Word*>(lines.data()); }

// A matrix read as rows of k values: op(a) (m, k), or op(b) transposed (n, k).
// Element (row, p) is at data[row * stride + p] when k_contiguous, else at
// data[p * stride + row].
struct RowsOfK {
  const bfloat16* data;
  int64_t stride;
  bool k_contiguous;
};

// words[r] = (low[r], high[r]) for r < count, high = nullptr reading as zeros:
// eight at a time with SSE2's 16-bit interleave, the rest one by one.
void interleave(const bfloat16* low, const bfloat16* high, int64_t count, Word* words) {
  int64_t r = 0;
  for (; r + 8 <= count; r += 8) {
    const __m128i lows = _mm_loadu_si128(reinterpret_cast<const __m128i*>(low + r));
    const __m128i highs = high ? _mm_loadu_si128(reinterpret_cast<const __m128i*>(high + r)) : _mm_setzero_si128();
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words + r), _mm_unpacklo_epi16(lows, highs));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(words + r + 4), _mm_unpackhi_epi16(lows, highs));
  }
  for (; r < count; ++r) words[r] = low[r].bits | (high ? static_cast<Word>(high[r].bits) << 16 : 0);
}

// Eight rows (stride elements apart) of eight words each, transposed: word j
// of row i to out[j * out_stride + i].
void transpose_8x8(const bfloat16* rows, int64_t stride, Word* out, int64_t out_stride) {
  __m256i row[8], pairs_of_rows[8], quads_of_rows[8];
  for (int i = 0; i < 8; ++i) row[i] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows + i * stride));
  for (int i = 0; i < 8; i += 2) {  // (i, i + 1) interleaved: words 0 1 4 5 and 2 3 6 7 of each
    pairs_of_rows[i] = _mm256_unpacklo_epi32(row[i], row[i + 1]);
    pairs_of_rows[i + 1] = _mm256_unpackhi_epi32(row[i], row[i + 1]);
  }
  for (int i = 0; i < 8; i += 4)  // rows i..i+3 of words 0 | 4, 1 | 5, 2 | 6, 3 | 7
    for (int half = 0; half < 2; ++half) {
      quads_of_rows[i + 2 * half] = _mm256_unpacklo_epi64(pairs_of_rows[i + half], pairs_of_rows[i + 2 + half]);
      quads_of_rows[i + 2 * half + 1] = _mm256_unpackhi_epi64(pairs_of_rows[i + half], pairs_of_rows[i + 2 + half]);
    }
  for (int j = 0; j < 4; ++j) {  // rows 0-3 and 4-7 of word j, then of word j + 4
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + j * out_stride),
                        _mm256_permute2x128_si256(quads_of_rows[j], quads_of_rows[j + 4], 0x20));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out + (j + 4) * out_stride),
                        _mm256_permute2x128_si256(quads_of_rows[j], quads_of_rows[j + 4], 0x31));
  }
}

// Packs rows [row0, row0 + rows) and k values [k0, k0 + depth) of `matrix` into
// ceil(rows / width) panels of `width` rows, one after another: panel q's word
// (p, r) at out[(q * pairs + p) * width + r], zeros past the edges. Reads the
// matrix in the order it is stored.
void pack_panels(const RowsOfK& matrix, int64_t row0, int64_t rows, int width, int64_t k0, int64_t depth, Word* out) {
  const int64_t pairs = ceil_div(depth, 2), whole_pairs = depth / 2, padded_rows = ceil_div(rows, width) * width;
  auto panel_words = [&](int64_t r, int64_t p) { return out + (r / width * pairs + p) * width + r % width; };
  if (matrix.k_contiguous) {
    // Each pair is one 32-bit word of the row as stored (little-endian: k = 2p in
    // the low half): 8 rows x 8 pairs at a time transposed in registers, the
    // rows and pairs left over one word at a time.
    const bfloat16* first_row = matrix.data + row0 * matrix.stride + k0;
    const int64_t whole_groups = rows / 8 * 8, transposed_pairs = whole_pairs / 8 * 8;
    for (int64_t r = 0; r < whole_groups; r += 8)
      for (int64_t p = 0; p < transposed_pairs; p += 8)
        transpose_8x8(first_row + r * matrix.stride + 2 * p, matrix.stride, panel_words(r, p), width);
    for (int64_t r = 0; r < rows; ++r) {
      const bfloat16* row = first_row + r * matrix.stride;
      for (int64_t p = r < whole_groups ? transposed_pairs : 0; p < whole_pairs; ++p)
        std::memcpy(panel_words(r, p), row + 2 * p, sizeof(Word));
      if (pairs > whole_pairs) *panel_words(r, whole_pairs) = row[2 * whole_pairs].bits;
    }
  } else {
    // Rows k = 2p and 2p + 1 as stored, interleaved, one panel's width at a time.
    for (int64_t p = 0; p < pairs; ++p) {
      const bfloat16* low = matrix.data + (k0 + 2 * p) * matrix.stride + row0;
      const bfloat16* high = 2 * p + 1 < depth ? low + matrix.stride : nullptr;
      for (int64_t r = 0; r < rows; r += width)
        interleave(low + r, high ? high + r : nullptr, std::min<int64_t>(width, rows - r), panel_words(r, p));
    }
  }
  for (int64_t r = rows; r < padded_rows; ++r)
    for (int64_t p = 0; p < pairs; ++p) *panel_words(r, p) = 0;
}

__m512bh as_pairs(__m512i words) { return reinterpret_cast<__m512bh>(words); }

// The lanes of a 16-column vector that lie inside the tile's `columns` (may be <= 0 or > 16).
__mmask16 lanes_below(int columns) {
  if (columns <= 0) return 0;
  return columns >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << columns) - 1);
}

// The micro-kernel: the first `rows` x `columns` of
//   c (kRows, kCols) = alpha * a_panel (kRows, 2 pairs) @ b_panel (2 pairs, kCols) + beta * c,
// with beta == 0 ignoring c. Rows of c are ldc apart.
void multiply_panels(int64_t pairs, const Word* a_panel, const Word* b_panel, float alpha, float beta, float* c,
                     int64_t ldc, int rows, int columns) {
  // The tile of c is read (or, beta == 0, written) only after the sums: fetch
  // its lines now, while the multiply-adds run. c as large as baby's qkv output
  // (16384 x 1152 floats) comes from memory.
  for (int r = 0; r < rows; ++r)
    for (int offset = 0; offset < kCols; offset += 16) _mm_prefetch(c + r * ldc + offset, _MM_HINT_T0);
  __m512 sums[kRows][kVectors];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 3
    for (int v = 0; v < kVectors; ++v) sums[r][v] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh b_pairs[kVectors];
#pragma GCC unroll 3
    for (int v = 0; v < kVectors; ++v) b_pairs[v] = as_pairs(_mm512_load_si512(b_panel + p * kCols + 16 * v));
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512bh a_pair = as_pairs(_mm512_set1_epi32(static_cast<int>(a_panel[p * kRows + r])));
#pragma GCC unroll 3
      for (int v = 0; v < kVectors; ++v) sums[r][v] = _mm512_dpbf16_ps(sums[r][v], a_pair, b_pairs[v]);
    }
  }
  const __m512 alpha_lanes = _mm512_set1_ps(alpha), beta_lanes = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    float* c_row = c + r * ldc;
#pragma GCC unroll 3
    for (int v = 0; v < kVectors; ++v) {
      const __mmask16 lanes = lanes_below(columns - 16 * v);
      __m512 result = _mm512_mul_ps(alpha_lanes, sums[r][v]);
      if (beta != 0.0f) result = _mm512_fmadd_ps(beta_lanes, _mm512_maskz_loadu_ps(lanes, c_row + 16 * v), result);
      _mm512_mask_storeu_ps(c_row + 16 * v, lanes, result);
    }
  }
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
                multiply_panels(pairs, packed_a + row_panel * pairs * kRows, packed_b + col_panel * pairs * kCols,
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
