// Vectors of floats (simd.h) from and to the quantized formats: int8 weights
// and bfloat16 weights or activations, for the row kernels of batch-1 decoding
// (quantized_kernels.h). kLanes<float> of them at a time: 16 with AVX-512, 8
// with AVX2. Intrinsics, one version per instruction set, because the compiler
// does not find these widening loads and the rounding pack by itself. GCC 12
// warns falsely about the AVX-512 ones once inlined: the kernels that use them
// turn that warning off (quantized_kernels.h says why).
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/cpu/simd.h"
#include "tinygpt/tensor/runtime/isa.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h): the kernel files inline their own.
inline namespace TG_ISA {
namespace simd {

#if defined(__AVX512F__)
// 16 int8 -> 16 floats.
inline Vector<float> widen_int8(const int8_t* q) {
  return (Vector<float>)_mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q))));
}
// 16 bfloat16 -> 16 floats: each 16-bit pattern becomes a float's top half.
inline Vector<float> widen_bfloat16(const bfloat16* w) {
  const __m512i words = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(w)));
  return (Vector<float>)_mm512_castsi512_ps(_mm512_slli_epi32(words, 16));
}
// 16 finite floats -> 16 bfloat16, rounded to nearest, ties to even (as tg::bfloat16).
inline void store_bfloat16(bfloat16* out, const Vector<float>& v) {
  const __m512i bits = _mm512_castps_si512((__m512)v);
  const __m512i lowest_kept_bit = _mm512_and_si512(_mm512_srli_epi32(bits, 16), _mm512_set1_epi32(1));
  const __m512i rounded = _mm512_add_epi32(bits, _mm512_add_epi32(_mm512_set1_epi32(0x7fff), lowest_kept_bit));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm512_cvtepi32_epi16(_mm512_srli_epi32(rounded, 16)));
}
#else
// 8 int8 -> 8 floats.
inline Vector<float> widen_int8(const int8_t* q) {
  return (Vector<float>)_mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q))));
}
// 8 bfloat16 -> 8 floats.
inline Vector<float> widen_bfloat16(const bfloat16* w) {
  const __m256i words = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(w)));
  return (Vector<float>)_mm256_castsi256_ps(_mm256_slli_epi32(words, 16));
}
// 8 finite floats -> 8 bfloat16, rounded to nearest, ties to even (as tg::bfloat16).
inline void store_bfloat16(bfloat16* out, const Vector<float>& v) {
  const __m256i bits = _mm256_castps_si256((__m256)v);
  const __m256i lowest_kept_bit = _mm256_and_si256(_mm256_srli_epi32(bits, 16), _mm256_set1_epi32(1));
  const __m256i rounded = _mm256_add_epi32(bits, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lowest_kept_bit));
  const __m256i top_halves = _mm256_srli_epi32(rounded, 16);                         // 8 x 32-bit, each < 2^16
  const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(top_halves, top_halves), 0b1000);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), _mm256_castsi256_si128(packed));
}
#endif

}  // namespace simd
}  // namespace TG_ISA
}  // namespace tg::cpu
