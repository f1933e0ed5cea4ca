// The packed panels and the micro-kernel of the VDPBF16PS products: the
// large product cpu::gemm_bf16 (tensor/cpu/gemm_bf16_avx512_bf16.cpp) and
// attention's per-head products (tensor/cpu/attention_kernels_avx512_bf16.cpp).
// Included only by files compiled with -mavx512bf16 (the top CMakeLists.txt),
// in their namespace isa_avx512_bf16 (tensor/runtime/isa.h).
//
// VDPBF16PS multiplies pairs: each 32-bit lane of its operands holds two
// bfloat16 of consecutive k, and it adds both products to the lane's float32
// sum. So the operands are first packed ("panels", as in GotoBLAS and BLIS),
// one 32-bit word per pair, low half k = 2p, high half k = 2p + 1:
//
//   A panel, kRows rows of op(a):    word [p][r] = (op(a)(i0 + r, 2p), op(a)(i0 + r, 2p + 1))
//   B panel, 16 * Vectors columns of op(b): word [p][j] = (op(b)(2p, j0 + j), op(b)(2p + 1, j0 + j))
//
// Rows and columns past the matrix, and the partner of an odd k's last value,
// are packed as zeros, so the micro-kernel always computes a whole tile and
// only its stores are masked. For each pair p it loads the B panel's row
// (Vectors vectors of 16 columns), broadcasts each A word to all lanes and
// issues kRows x Vectors VDPBF16PS into as many accumulator registers.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tinygpt/tensor/bfloat16.h"

namespace tg::cpu::isa_avx512_bf16 {

using Word = uint32_t;  // two bfloat16 of consecutive k

inline constexpr int kRows = 8;  // rows of c per micro-kernel tile

inline int64_t ceil_div(int64_t value, int64_t divisor) { return (value + divisor - 1) / divisor; }

// Packed words on 64-byte lines, so that each B panel row is one aligned load per vector.
struct alignas(64) CacheLine {
  Word words[16];
};

inline Word* words_of(std::vector<CacheLine>& lines) { return reinterpret_cast<Word*>(lines.data()); }

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
inline void interleave(const bfloat16* low, const bfloat16* high, int64_t count, Word* words) {
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
inline void transpose_8x8(const bfloat16* rows, int64_t stride, Word* out, int64_t out_stride) {
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
inline void pack_panels(const RowsOfK& matrix, int64_t row0, int64_t rows, int width, int64_t k0, int64_t depth, Word* out) {
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

inline __m512bh as_pairs(__m512i words) { return reinterpret_cast<__m512bh>(words); }

// The lanes of a 16-column vector that lie inside the tile's `columns` (may be <= 0 or > 16).
inline __mmask16 lanes_below(int columns) {
  if (columns <= 0) return 0;
  return columns >= 16 ? __mmask16(0xffff) : static_cast<__mmask16>((1u << columns) - 1);
}

// The micro-kernel: the first `rows` x `columns` of
//   c (kRows, 16 * Vectors) = alpha * a_panel (kRows, 2 pairs) @ b_panel (2 pairs, 16 * Vectors) + beta * c,
// with beta == 0 ignoring c. Rows of c are ldc apart.
template <int Vectors>
inline void multiply_panels(int64_t pairs, const Word* a_panel, const Word* b_panel, float alpha, float beta,
                            float* c, int64_t ldc, int rows, int columns) {
  constexpr int kColumns = 16 * Vectors;
  // The tile of c is read (or, beta == 0, written) only after the sums: fetch
  // its lines now, while the multiply-adds run. c as large as baby's qkv output
  // (16384 x 1152 floats) comes from memory.
  for (int r = 0; r < rows; ++r)
    for (int offset = 0; offset < kColumns; offset += 16) _mm_prefetch(c + r * ldc + offset, _MM_HINT_T0);
  __m512 sums[kRows][Vectors];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r)
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) sums[r][v] = _mm512_setzero_ps();
  for (int64_t p = 0; p < pairs; ++p) {
    __m512bh b_pairs[Vectors];
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) b_pairs[v] = as_pairs(_mm512_load_si512(b_panel + p * kColumns + 16 * v));
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512bh a_pair = as_pairs(_mm512_set1_epi32(static_cast<int>(a_panel[p * kRows + r])));
#pragma GCC unroll 4
      for (int v = 0; v < Vectors; ++v) sums[r][v] = _mm512_dpbf16_ps(sums[r][v], a_pair, b_pairs[v]);
    }
  }
  const __m512 alpha_lanes = _mm512_set1_ps(alpha), beta_lanes = _mm512_set1_ps(beta);
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
    if (r >= rows) break;
    float* c_row = c + r * ldc;
#pragma GCC unroll 4
    for (int v = 0; v < Vectors; ++v) {
      const __mmask16 lanes = lanes_below(columns - 16 * v);
      __m512 result = _mm512_mul_ps(alpha_lanes, sums[r][v]);
      if (beta != 0.0f) result = _mm512_fmadd_ps(beta_lanes, _mm512_maskz_loadu_ps(lanes, c_row + 16 * v), result);
      _mm512_mask_storeu_ps(c_row + 16 * v, lanes, result);
    }
  }
}

}  // namespace tg::cpu::isa_avx512_bf16
