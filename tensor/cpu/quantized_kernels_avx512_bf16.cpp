// dot_int8_rows and dot_bfloat16_rows (tensor/cpu/quantized_kernels_avx512_bf16.h)
// with one instruction per 64 int8 or 32 bfloat16 weights. Compiled with
// -mavx512vnni -mavx512bf16 (the top CMakeLists.txt): nothing here may run on
// a CPU without them, so it all lives in isa_avx512_bf16 (tensor/runtime/isa.h).
//
// int8: VPDPBUSD multiplies 64 unsigned bytes by 64 signed ones and sums each
// four neighbours into one of 16 int32 lanes. Two blocks of 32 weights fill a
// vector, lanes 0-7 summing the first block's products and lanes 8-15 the
// second's, so each lane is scaled by its block's w_scale * x_scale and added
// into a float32 total. The activations' signs move onto the weights
// (|x| * (w * sign x)), from a bit mask made once per vector x
// (Int8Activations::negative). Per 64 weights: a load, a masked subtract, the
// VPDPBUSD, a conversion and a multiply-add; the scales of four pairs of blocks
// are multiplied together and spread over their lanes in one go. The maddubs
// kernel of the AVX-512 copy takes about twice the instructions.
//
// bfloat16: VDPBF16PS multiplies 32 bfloat16 pairs and adds both products of
// each pair into one of 16 float32 sums; x is rounded to bfloat16 once per
// vector (BFloat16Activations). The products are exact; VDPBF16PS treats
// subnormal inputs as zero and rounds each sum to nearest.
//
// A row's last, shorter vector is loaded under a mask (zeros beyond the row),
// so every row length takes the same path.
#include "tinygpt/tensor/cpu/quantized_kernels_avx512_bf16.h"

#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from an "undefined" vector that
// -Wmaybe-uninitialized reports once inlined (GCC bug 105593): a false alarm.
// (clang has no -Wmaybe-uninitialized.)
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace tg::cpu::isa_avx512_bf16 {

namespace {

constexpr int64_t kPairWeights = 2 * kInt8BlockSize;  // 64: one vector of int8 weights
// How far ahead of its reads a kernel asks for the weights: kQuantizedRowPrefetchBytes
// (rounded_activations.h), for every copy of the row kernels. Rows follow each other in
// memory, so the weights stream in one sequence, but the hardware prefetcher alone falls
// well behind one core's reads; 16 KB ahead measured best (docs/performance.md). Past the
// end of a thread's rows the requests fetch weights it will not read (16 KB of 38 MB for
// gpt2's LM head) and never fault.

// The 16 int32 sums of 64 weights at w times x's 64 activations from column
// col: lanes 0-7 the first block's, 8-15 the second's. `valid` masks the
// columns that exist.
__m512i block_pair_sums(const int8_t* w, const Int8Activations& x, int64_t col, __mmask64 valid) {
  const __m512i weights = _mm512_maskz_loadu_epi8(valid, w);
  const __mmask64 negative = _cvtu64_mask64(x.negative[col / kPairWeights]);
  const __m512i signed_w = _mm512_mask_sub_epi8(weights, negative, _mm512_setzero_si512(), weights);
  return _mm512_dpbusd_epi32(_mm512_setzero_si512(), _mm512_maskz_loadu_epi8(valid, x.magnitudes.data() + col),
                             signed_w);
}

// The lanes' scales for pair `pair` (0-3) of the eight block scales in
// `scales`: lanes 0-7 scales[2 pair], lanes 8-15 scales[2 pair + 1].
__m512 pair_scales(__m512 scales, int pair) {
  const __m512i lane_block = _mm512_add_epi32(_mm512_set1_epi32(2 * pair),
                                              _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0));
  return _mm512_permutexvar_ps(lane_block, scales);
}

float dot_int8_row(const int8_t* w, const float* w_scales, const Int8Activations& x, int64_t cols) {
  const float* x_scales = x.scales.data();
  const int64_t blocks = int8_blocks_per_row(cols);
  __m512 totals[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t col = 0;
  for (; col + 4 * kPairWeights <= cols; col += 4 * kPairWeights) {  // four pairs of blocks
    const int64_t block = col / kInt8BlockSize;
    const __m512 scales = _mm512_castps256_ps512(
        _mm256_mul_ps(_mm256_loadu_ps(w_scales + block), _mm256_loadu_ps(x_scales + block)));
    for (int pair = 0; pair < 4; ++pair) {
      const int64_t start = col + pair * kPairWeights;
      _mm_prefetch(reinterpret_cast<const char*>(w + start) + kQuantizedRowPrefetchBytes, _MM_HINT_T0);
      const __m512 sums = _mm512_cvtepi32_ps(block_pair_sums(w + start, x, start, ~__mmask64{0}));
      totals[pair % 2] = _mm512_fmadd_ps(sums, pair_scales(scales, pair), totals[pair % 2]);
    }
  }
  for (; col < cols; col += kPairWeights) {  // the rest, a pair at a time, the last one masked
    const int64_t block = col / kInt8BlockSize, left = cols - col;
    const __mmask64 valid = left >= kPairWeights ? ~__mmask64{0} : (__mmask64{1} << left) - 1;
    const __mmask16 two_scales = blocks - block >= 2 ? 0b11 : 0b01;
    const __m512 scales = _mm512_mul_ps(_mm512_maskz_loadu_ps(two_scales, w_scales + block),
                                        _mm512_maskz_loadu_ps(two_scales, x_scales + block));
    const __m512 sums = _mm512_cvtepi32_ps(block_pair_sums(w + col, x, col, valid));
    totals[0] = _mm512_fmadd_ps(sums, pair_scales(scales, 0), totals[0]);
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(totals[0], totals[1]));
}

__m512bh as_pairs(__m512i words) { return reinterpret_cast<__m512bh>(words); }

float dot_bfloat16_row(const bfloat16* w, const bfloat16* x, int64_t cols) {
  constexpr int64_t kWeights = 32;  // a vector of bfloat16
  __m512 sums[4] = {_mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps(), _mm512_setzero_ps()};
  int64_t col = 0;
  for (; col + 4 * kWeights <= cols; col += 4 * kWeights)
    for (int part = 0; part < 4; ++part) {
      _mm_prefetch(reinterpret_cast<const char*>(w + col + part * kWeights) + kQuantizedRowPrefetchBytes, _MM_HINT_T0);
      sums[part] = _mm512_dpbf16_ps(sums[part], as_pairs(_mm512_loadu_si512(w + col + part * kWeights)),
                                    as_pairs(_mm512_loadu_si512(x + col + part * kWeights)));
    }
  for (; col < cols; col += kWeights) {
    const int64_t left = cols - col;
    const __mmask32 valid = left >= kWeights ? ~__mmask32{0} : (__mmask32{1} << left) - 1;
    sums[0] = _mm512_dpbf16_ps(sums[0], as_pairs(_mm512_maskz_loadu_epi16(valid, w + col)),
                               as_pairs(_mm512_maskz_loadu_epi16(valid, x + col)));
  }
  return _mm512_reduce_add_ps(_mm512_add_ps(_mm512_add_ps(sums[0], sums[1]), _mm512_add_ps(sums[2], sums[3])));
}

}  // namespace

void dot_int8_rows(const int8_t* values, const float* scales, int64_t rows, int64_t cols, const Int8Activations& x,
                   float* out) {
  const int64_t blocks = int8_blocks_per_row(cols);
  for (int64_t row = 0; row < rows; ++row) out[row] = dot_int8_row(values + row * cols, scales + row * blocks, x, cols);
}

void dot_bfloat16_rows(const bfloat16* values, int64_t rows, int64_t cols, const BFloat16Activations& x, float* out) {
  for (int64_t row = 0; row < rows; ++row) out[row] = dot_bfloat16_row(values + row * cols, x.values.data(), cols);
}

}  // namespace tg::cpu::isa_avx512_bf16
