// The row kernels behind tensor/quantized_matmul.h: rows of weights in
// bfloat16 or int8 blocks (tensor/quantized_matrix.h) dotted with a vector of
// activations (rounded to bfloat16 for bfloat16, to int8 blocks for int8), or
// one row widened to float32 or bfloat16 for a product of many rows. Compiled
// twice, for AVX2 and for AVX-512 (tensor/cpu/quantized_kernel_table.cpp,
// tensor/runtime/isa.h), each copy in its TG_ISA namespace; a third set takes its two
// dot products from tensor/cpu/quantized_kernels_avx512_bf16.cpp. Callers take
// them from quantized_row_kernels().
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
#include <vector>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/cpu/rounded_activations.h"

// GCC 12's AVX-512 widening intrinsics start from an "undefined" vector that
// -Wmaybe-uninitialized and -Wuninitialized report once inlined (GCC bug
// 105593): a false alarm.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace tg {
inline namespace TG_ISA {

namespace simd {

#if defined(__AVX512F__)
constexpr int64_t kLanes = 16;
using FloatVector = __m512;
inline FloatVector zero_vector() { return _mm512_setzero_ps(); }
inline FloatVector load_floats(const float* x) { return _mm512_loadu_ps(x); }
inline FloatVector broadcast(float value) { return _mm512_set1_ps(value); }
inline FloatVector multiply_add(FloatVector a, FloatVector b, FloatVector c) { return _mm512_fmadd_ps(a, b, c); }
inline FloatVector multiply(FloatVector a, FloatVector b) { return _mm512_mul_ps(a, b); }
inline FloatVector add(FloatVector a, FloatVector b) { return _mm512_add_ps(a, b); }
inline float sum_lanes(FloatVector v) { return _mm512_reduce_add_ps(v); }
inline void store_floats(float* out, FloatVector v) { _mm512_storeu_ps(out, v); }
// 16 int8 -> 16 floats.
inline FloatVector widen_int8(const int8_t* q) {
  return _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
}
// 16 finite floats -> 16 bfloat16, rounded to nearest, ties to even (as tg::bfloat16).
inline void store_bfloat16(bfloat16* out, FloatVector v) {
  const __m512i bits = _mm512_castps_si512(v);
  const __m512i lowest_kept_bit = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lowest_kept_bit));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16)));
}
// 16 bfloat16 -> 16 floats: each 16-bit pattern becomes a float's top half.
inline FloatVector widen_bfloat16(const bfloat16* w) {
  const __m512i words = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
  return _mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
}
#else
constexpr int64_t kLanes = 8;
using FloatVector = __m256;
inline FloatVector zero_vector() { return _mm256_setzero_ps(); }
inline FloatVector load_floats(const float* x) { return _mm256_loadu_ps(x); }
inline FloatVector broadcast(float value) { return _mm256_set1_ps(value); }
inline FloatVector multiply_add(FloatVector a, FloatVector b, FloatVector c) { return _mm256_fmadd_ps(a, b, c); }
inline FloatVector multiply(FloatVector a, FloatVector b) { return _mm256_mul_ps(a, b); }
inline FloatVector add(FloatVector a, FloatVector b) { return _mm256_add_ps(a, b); }
inline float sum_lanes(FloatVector v) {
  __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // 4 lanes
  sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));                                   // 2 lanes
  sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));                                      // 1 lane
  return _mm_cvtss_f32(sum);
}
inline void store_floats(float* out, FloatVector v) { _mm256_storeu_ps(out, v); }
// 8 int8 -> 8 floats.
inline FloatVector widen_int8(const int8_t* q) {
  return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
}
// 8 finite floats -> 8 bfloat16, rounded to nearest, ties to even (as tg::bfloat16).
inline void store_bfloat16(bfloat16* out, FloatVector v) {
  const __m256i bits = _mm256_castps_si256(v);
  const __m256i lowest_kept_bit = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lowest_kept_bit));
  const __m256i top_halves = _mm256_srli_epi32(rounded, 16);                         // 8 x 32-bit, each < 2^16
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(top_halves, top_halves), 0b1000);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
}
// 8 bfloat16 -> 8 floats.
inline FloatVector widen_bfloat16(const bfloat16* w) {
  const __m256i words = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(words, 16));
}
#endif

}  // namespace simd

constexpr int64_t kVectorsPerBlock = kInt8BlockSize / simd::kLanes;

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
  dot = simd::sum_lanes(_mm256_add_ps(totals[0], totals[1]));
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
  simd::FloatVector sums[4] = {simd::zero_vector(), simd::zero_vector(), simd::zero_vector(), simd::zero_vector()};
  int64_t col = 0;
  for (; col + 4 * simd::kLanes <= cols; col += 4 * simd::kLanes) {
    for (int64_t line = 0; line < 4 * simd::kLanes * 2; line += 64) prefetch_ahead(reinterpret_cast<const char*>(w + col) + line);
    for (int part = 0; part < 4; ++part)
      sums[part] = simd::multiply_add(simd::widen_bfloat16(w + col + part * simd::kLanes), simd::load_floats(x + col + part * simd::kLanes), sums[part]);
  }
  for (; col + simd::kLanes <= cols; col += simd::kLanes)
    sums[0] = simd::multiply_add(simd::widen_bfloat16(w + col), simd::load_floats(x + col), sums[0]);
  float dot = simd::sum_lanes(simd::add(simd::add(sums[0], sums[1]), simd::add(sums[2], sums[3])));
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
    const simd::FloatVector scale = simd::broadcast(scales[block]);
    for (int64_t part = 0; part < kVectorsPerBlock; ++part)
      simd::store_floats(out + col + part * simd::kLanes, simd::multiply(simd::widen_int8(values + col + part * simd::kLanes), scale));
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
    const simd::FloatVector scale = simd::broadcast(scales[block]);
    for (int64_t part = 0; part < kVectorsPerBlock; ++part)
      simd::store_bfloat16(out + col + part * simd::kLanes,
                           simd::multiply(simd::widen_int8(values + col + part * simd::kLanes), scale));
  }
  for (int64_t col = full_blocks * kInt8BlockSize; col < cols; ++col)
    out[col] = bfloat16(static_cast<float>(values[col]) * scales[full_blocks]);
}

// out (cols) = the float32 weights of one bfloat16 row (exact).
inline void dequantize_bfloat16_row(const bfloat16* w, float* out, int64_t cols) {
  int64_t col = 0;
  for (; col + simd::kLanes <= cols; col += simd::kLanes) simd::store_floats(out + col, simd::widen_bfloat16(w + col));
  for (; col < cols; ++col) out[col] = static_cast<float>(w[col]);
}

}  // namespace TG_ISA
#pragma GCC diagnostic pop

struct QuantizedRowKernels {
  void (*dot_int8_rows)(const int8_t* values, const float* scales, int64_t rows, int64_t cols,
                        const Int8Activations& x, float* out);
  void (*dot_bfloat16_rows)(const bfloat16* values, int64_t rows, int64_t cols, const BFloat16Activations& x,
                            float* out);
  void (*dequantize_int8_row)(const int8_t* values, const float* scales, float* out, int64_t cols);
  void (*dequantize_int8_row_to_bfloat16)(const int8_t* values, const float* scales, bfloat16* out, int64_t cols);
  void (*dequantize_bfloat16_row)(const bfloat16* w, float* out, int64_t cols);
};

namespace isa_avx2 {
extern const QuantizedRowKernels kQuantizedRowKernels;
}
namespace isa_avx512 {
extern const QuantizedRowKernels kQuantizedRowKernels;
}

// The sets of row kernels: the AVX2 copy, the AVX-512 copy, and the AVX-512
// copy whose two dot products use AVX512-VNNI (VPDPBUSD: 64 byte products
// summed into 16 int32 lanes in one instruction) and AVX512-BF16 (VDPBF16PS: 32
// bfloat16 products into 16 float32 sums), which CPUs since Cooper Lake and
// Zen 4 have (tensor/cpu/quantized_kernels_avx512_bf16.cpp).
enum class QuantizedKernelSet { avx2, avx512, avx512_vnni_bf16 };
// The set in use: by active_isa(), and avx512_vnni_bf16 where the CPU has
// AVX512-VNNI and AVX512-BF16 too (so TINYGPT_ISA=avx2 selects avx2).
QuantizedKernelSet active_quantized_kernel_set();
// Every set this CPU can run, for tests and benchmarks that compare them.
std::vector<QuantizedKernelSet> quantized_kernel_sets_here();
const char* quantized_kernel_set_name(QuantizedKernelSet set);  // "AVX2", "AVX-512", "AVX-512 VNNI+BF16"
const QuantizedRowKernels& quantized_row_kernels(QuantizedKernelSet set = active_quantized_kernel_set());

}  // namespace tg
