// The row kernels behind tensor/quantized_matmul.h: rows of weights in
// bfloat16 or int8 blocks (tensor/quantized_matrix.h) dotted with a vector of
// activations (rounded to bfloat16 for bfloat16, to int8 blocks for int8), or
// one row widened to float32 or bfloat16 for a product of many rows. Compiled
// twice, for AVX2 and for AVX-512 (tensor/cpu/kernel_table.cpp,
// tensor/runtime/isa.h), each copy in its TG_ISA namespace; a third set takes its two
// dot products from tensor/cpu/quantized_kernels_avx512_bf16.cpp. Callers take
// them from quantized_row_kernels() (kernel_table.h).
//
// Batch-1 decoding reads each weight once for one multiply-add, so these
// kernels must keep up with memory: an int8 row is 1.125 bytes a weight, so a
// core has to multiply tens of weights a nanosecond. Widening each int8 weight
// to a float (three instructions per 16) fell short of that. So the int8 row
// takes its activations in int8 blocks too (Int8Activations, as the Q8_0
// products of CPU inference engines do) and multiplies bytes: 64 weights in
// five instructions with AVX-512, bound by memory again (figures:
// docs/performance.md, "The measurements behind the kernels' constants"). A bfloat16 weight is
// shifted into a float's top half and multiplied with the activations rounded
// to bfloat16 (and widened back, exactly).
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/cpu/rounded_activations.h"
#include "tinygpt/tensor/cpu/simd.h"
#include "tinygpt/tensor/cpu/simd_int8_bfloat16.h"

// GCC 12's AVX-512 intrinsics (the widening ones of simd_int8_bfloat16.h and
// the conversions and permutes below) start from an "undefined" vector that
// -Wmaybe-uninitialized and -Wuninitialized report once inlined (GCC bug
// 105593): a false alarm. (clang has no -Wmaybe-uninitialized.)
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace tg::cpu {
inline namespace TG_ISA {

constexpr int64_t kVectorsPerBlock = kInt8BlockSize / simd::kLanes<float>;

inline void prefetch_ahead(const void* weights) {
  _mm_prefetch(static_cast<const char*>(weights) + kQuantizedRowPrefetchBytes, _MM_HINT_T0);
}

// One block of 32 weights w times the activations x in integers: 8 int32 lanes
// whose sum is sum_c w[c] * x[c]. maddubs multiplies unsigned by signed bytes,
// so x's sign moves onto w (|x| * (w * sign x)); each pair of products is at
// most 2 * 127 * 127, which int16 holds.
inline __m256i int8_block_sums(const int8_t* w, const int8_t* x, const uint8_t* x_magnitudes) {
  const __m256i signed_w = _mm256_sign_epi8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)),
                                            _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x)));
  const __m256i pairs =
      _mm256_maddubs_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x_magnitudes)), signed_w);  // 16 int16
  return _mm256_madd_epi16(pairs, _mm256_set1_epi16(1));                                                   // 8 int32
}

#if defined(__AVX512F__)
// Two blocks at once: 16 int32 lanes, the first 8 from the block at w, the next 8
// from the one after. The sign moves with a mask (AVX-512 has no sign_epi8).
inline __m512i int8_block_pair_sums(const int8_t* w, uint64_t x_negative, const uint8_t* x_magnitudes) {
  const __m512i weights = _mm512_loadu_si512(w);
  const __mmask64 negative = _cvtu64_mask64(x_negative);
  const __m512i signed_w = _mm512_mask_sub_epi8(weights, negative, _mm512_setzero_si512(), weights);
  const __m512i pairs = _mm512_maddubs_epi16(_mm512_loadu_si512(x_magnitudes), signed_w);  // 32 int16
  return _mm512_madd_epi16(pairs, _mm512_set1_epi16(1));                                  // 16 int32
}

// The scale of each of the 16 lanes: w_scales[0] * x_scales[0] for the first 8,
// w_scales[1] * x_scales[1] for the next 8.
inline __m512 block_pair_scales(const float* w_scales, const float* x_scales) {
  const __m128 two_w = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(w_scales)));
  const __m128 two_x = _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x_scales)));
  const __m512i lane_block = _mm512_set_epi32(1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0);
  return _mm512_permutexvar_ps(lane_block, _mm512_castps128_ps512(_mm_mul_ps(two_w, two_x)));
}
#endif

// sum over c of W[c] * X[c] for one row of `cols`, where W[c] = values[c] *
// scales[c / 32] and X[c] = x.values[c] * x.scales[c / 32]: each block's
// product summed exactly in integers, then scaled once.
inline float dot_int8_row(const int8_t* values, const float* scales, const Int8Activations& x, int64_t cols) {
  const int8_t* x_values = x.values.data();
  const uint8_t* x_magnitudes = x.magnitudes.data();
  const float* x_scales = x.scales.data();
  const int64_t full_blocks = cols / kInt8BlockSize;
  int64_t block = 0;
  float dot = 0.0f;
#if defined(__AVX512F__)
  __m512 totals[2] = {_mm512_setzero_ps(), _mm512_setzero_ps()};
  for (; block + 2 <= full_blocks; block += 2) {
    const int64_t col = block * kInt8BlockSize;
    prefetch_ahead(values + col);
    const __m512 sums = _mm512_cvtepi32_ps(int8_block_pair_sums(values + col, x.negative[block / 2], x_magnitudes + col));
    totals[block / 2 % 2] =
        _mm512_fmadd_ps(sums, block_pair_scales(scales + block, x_scales + block), totals[block / 2 % 2]);
  }
  if (block < full_blocks) {  // an odd block left: its 8 lanes, the upper 8 zero
    const int64_t col = block * kInt8BlockSize;
    const __m256 sums = _mm256_cvtepi32_ps(int8_block_sums(values + col, x_values + col, x_magnitudes + col));
    totals[1] = _mm512_add_ps(totals[1], _mm512_zextps256_ps512(
                                             _mm256_mul_ps(sums, _mm256_set1_ps(scales[block] * x_scales[block]))));
    ++block;
  }
  dot = _mm512_reduce_add_ps(_mm512_add_ps(totals[0], totals[1]));
#else
  __m256 totals[2] = {_mm256_setzero_ps(), _mm256_setzero_ps()};
  for (; block < full_blocks; ++block) {
    const int64_t col = block * kInt8BlockSize;
    if (block % 2 == 0) prefetch_ahead(values + col);  // a 64-byte line every two blocks
    const __m256 sums = _mm256_cvtepi32_ps(int8_block_sums(values + col, x_values + col, x_magnitudes + col));
    totals[block % 2] = _mm256_fmadd_ps(sums, _mm256_set1_ps(scales[block] * x_scales[block]), totals[block % 2]);
  }
  dot = simd::sum_lanes<float>(_mm256_add_ps(totals[0], totals[1]));
#endif
  if (full_blocks * kInt8BlockSize < cols) {  // the shorter last block
    int32_t tail = 0;
    for (int64_t col = full_blocks * kInt8BlockSize; col < cols; ++col) tail += values[col] * x_values[col];
    dot += scales[full_blocks] * x_scales[full_blocks] * static_cast<float>(tail);
  }
  return dot;
}

// sum over c of w[c] * x[c] for one bfloat16 row of `cols`.
inline float dot_bfloat16_row(const bfloat16* w, const float* x, int64_t cols) {
  using simd::kLanes;
  simd::Vector<float> sums[4] = {};
  int64_t col = 0;
  for (; col + 4 * kLanes<float> <= cols; col += 4 * kLanes<float>) {
    for (int64_t line = 0; line < 4 * kLanes<float> * 2; line += 64)
      prefetch_ahead(reinterpret_cast<const char*>(w + col) + line);
    for (int part = 0; part < 4; ++part)
      sums[part] = simd::multiply_add<float>(simd::widen_bfloat16(w + col + part * kLanes<float>),
                                             simd::load(x + col + part * kLanes<float>), sums[part]);
  }
  for (; col + kLanes<float> <= cols; col += kLanes<float>)
    sums[0] = simd::multiply_add<float>(simd::widen_bfloat16(w + col), simd::load(x + col), sums[0]);
  float dot = simd::sum_lanes<float>((sums[0] + sums[1]) + (sums[2] + sums[3]));
  for (; col < cols; ++col) dot += static_cast<float>(w[col]) * x[col];
  return dot;
}

// out[r] = row r of W . X for `rows` rows of `cols` int8 weights (values
// (rows, cols), scales (rows, ceil(cols / 32))), X as dot_int8_row.
inline void dot_int8_rows(const int8_t* values, const float* scales, int64_t rows, int64_t cols,
                          const Int8Activations& x, float* out) {
  const int64_t blocks = int8_blocks_per_row(cols);
  for (int64_t row = 0; row < rows; ++row) out[row] = dot_int8_row(values + row * cols, scales + row * blocks, x, cols);
}

// out[r] = row r of W . x for `rows` rows of `cols` bfloat16 weights, x rounded
// to bfloat16 (the products exact in float32).
inline void dot_bfloat16_rows(const bfloat16* values, int64_t rows, int64_t cols, const BFloat16Activations& x,
                              float* out) {
  for (int64_t row = 0; row < rows; ++row) out[row] = dot_bfloat16_row(values + row * cols, x.widened.data(), cols);
}

// out (cols) = the float32 weights of one int8 row.
inline void dequantize_int8_row(const int8_t* values, const float* scales, float* out, int64_t cols) {
  const int64_t full_blocks = cols / kInt8BlockSize;
  for (int64_t block = 0; block < full_blocks; ++block) {
    const int64_t col = block * kInt8BlockSize;
    const simd::Vector<float> scale = simd::splat(scales[block]);
    for (int64_t part = 0; part < kVectorsPerBlock; ++part)
      simd::store(out + col + part * simd::kLanes<float>,
                  simd::widen_int8(values + col + part * simd::kLanes<float>) * scale);
  }
  for (int64_t col = full_blocks * kInt8BlockSize; col < cols; ++col)
    out[col] = static_cast<float>(values[col]) * scales[full_blocks];
}

// out (cols) = the weights of one int8 row rounded to bfloat16, for the
// bfloat16 product (tensor/quantized_matmul.h). The weights must be finite.
inline void dequantize_int8_row_to_bfloat16(const int8_t* values, const float* scales, bfloat16* out, int64_t cols) {
  const int64_t full_blocks = cols / kInt8BlockSize;
  for (int64_t block = 0; block < full_blocks; ++block) {
    const int64_t col = block * kInt8BlockSize;
    const simd::Vector<float> scale = simd::splat(scales[block]);
    for (int64_t part = 0; part < kVectorsPerBlock; ++part)
      simd::store_bfloat16(out + col + part * simd::kLanes<float>,
                           simd::widen_int8(values + col + part * simd::kLanes<float>) * scale);
  }
  for (int64_t col = full_blocks * kInt8BlockSize; col < cols; ++col)
    out[col] = bfloat16(static_cast<float>(values[col]) * scales[full_blocks]);
}

// out (cols) = the float32 weights of one bfloat16 row (exact).
inline void dequantize_bfloat16_row(const bfloat16* w, float* out, int64_t cols) {
  int64_t col = 0;
  for (; col + simd::kLanes<float> <= cols; col += simd::kLanes<float>)
    simd::store(out + col, simd::widen_bfloat16(w + col));
  for (; col < cols; ++col) out[col] = static_cast<float>(w[col]);
}

}  // namespace TG_ISA
#pragma GCC diagnostic pop

}  // namespace tg::cpu
