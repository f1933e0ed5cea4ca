// Vectors as wide as the instruction set a kernel file is compiled for
// (tensor/runtime/isa.h): 16 floats with AVX-512, 8 with AVX2. Written with GCC's
// vector extension (which clang shares), so one source compiles to either.
//
// For kernels whose loops the compiler does not vectorise well by itself: a
// register tile of a matrix product (tensor/cpu/small_gemm.h), a maximum (a
// max reduction stays scalar without -ffast-math, which this project never
// enables), or the quantized rows of decoding (tensor/cpu/quantized_kernels.h),
// whose conversions from int8 and bfloat16 are in simd_int8_bfloat16.h.
//
// The one wrapper of tensor/cpu: tg::cpu::TG_ISA::simd, kLanes<T> values a vector.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include <immintrin.h>

#include "tinygpt/tensor/runtime/isa.h"

// GCC 12's _mm512_reduce_add_ps starts from an "undefined" vector that
// -Wmaybe-uninitialized and -Wuninitialized report once inlined (GCC bug
// 105593): a false alarm. (clang has no -Wmaybe-uninitialized.)
#pragma GCC diagnostic push
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h): the kernel files inline their own.
inline namespace TG_ISA {
namespace simd {

#if defined(__AVX512F__)
inline constexpr int kVectorBytes = 64;  // zmm
#else
inline constexpr int kVectorBytes = 32;  // ymm
#endif

template <class T>
struct VectorOf {
  typedef T type __attribute__((vector_size(kVectorBytes)));
};
template <class T>
using Vector = typename VectorOf<T>::type;
template <class T>
inline constexpr int64_t kLanes = kVectorBytes / sizeof(T);

// kLanes<T> values from any address (no alignment needed).
template <class T>
Vector<T> load(const T* from) {
  Vector<T> vector;
  std::memcpy(&vector, from, sizeof vector);
  return vector;
}
template <class T>
void store(T* to, const Vector<T>& vector) {
  std::memcpy(to, &vector, sizeof vector);
}

// A vector of `value` in every lane.
template <class T>
Vector<T> splat(T value) {
#if defined(__AVX512F__)
  if constexpr (sizeof(T) == 4) return (Vector<T>)_mm512_set1_ps(value);
  else return (Vector<T>)_mm512_set1_pd(value);
#else
  if constexpr (sizeof(T) == 4) return (Vector<T>)_mm256_set1_ps(value);
  else return (Vector<T>)_mm256_set1_pd(value);
#endif
}

// a * b + c rounded once (a fused multiply-add) in every lane, whatever the
// compiler's contraction of a * b + c would be (GCC forms FMAs at -O2, not at
// -O1): the same bits in every build, and the same as std::fma on one lane.
template <class T>
Vector<T> multiply_add(const Vector<T>& a, const Vector<T>& b, const Vector<T>& c) {
#if defined(__AVX512F__)
  if constexpr (sizeof(T) == 4) return (Vector<T>)_mm512_fmadd_ps((__m512)a, (__m512)b, (__m512)c);
  else return (Vector<T>)_mm512_fmadd_pd((__m512d)a, (__m512d)b, (__m512d)c);
#else
  if constexpr (sizeof(T) == 4) return (Vector<T>)_mm256_fmadd_ps((__m256)a, (__m256)b, (__m256)c);
  else return (Vector<T>)_mm256_fmadd_pd((__m256d)a, (__m256d)b, (__m256d)c);
#endif
}

namespace lanes {
template <class T, int Bytes>
struct Part {
  typedef T type __attribute__((vector_size(Bytes)));
};
template <class T, int Bytes, class Combine>
T reduce(const typename Part<T, Bytes>::type& part, const Combine& combine) {
  if constexpr (Bytes == sizeof(T)) {
    return part[0];
  } else {
    typename Part<T, Bytes / 2>::type low, high;
    std::memcpy(&low, &part, Bytes / 2);
    std::memcpy(&high, reinterpret_cast<const char*>(&part) + Bytes / 2, Bytes / 2);
    return reduce<T, Bytes / 2>(combine(low, high), combine);
  }
}
}  // namespace lanes

// The sum of a vector's lanes, as a tree of halves (4 steps for 16 floats, not a
// chain of 15): lane i plus lane i + half, until one lane is left. Floats take
// the same tree in shuffles: halving through memory, as lanes::reduce does,
// stored and reloaded a whole zmm register on each call, once per row of the
// quantized products.
template <class T>
T sum_lanes(const Vector<T>& vector) {
  if constexpr (sizeof(T) == 4) {
#if defined(__AVX512F__)
    return _mm512_reduce_add_ps((__m512)vector);
#else
    const __m256 v = (__m256)vector;
    __m128 sum = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));  // 4 lanes
    sum = _mm_add_ps(sum, _mm_movehl_ps(sum, sum));                                   // 2 lanes
    sum = _mm_add_ss(sum, _mm_movehdup_ps(sum));                                      // 1 lane
    return _mm_cvtss_f32(sum);
#endif
  } else {
    return lanes::reduce<T, kVectorBytes>(vector, [](const auto& a, const auto& b) { return a + b; });
  }
}
// The largest of a vector's lanes, likewise.
template <class T>
T max_lanes(const Vector<T>& vector) {
  return lanes::reduce<T, kVectorBytes>(vector, [](const auto& a, const auto& b) { return a > b ? a : b; });
}

// The largest of values[0..count-1]; -inf when count is 0.
template <class T>
T max_of(const T* values, int64_t count) {
  T largest = -std::numeric_limits<T>::infinity();
  int64_t i = 0;
  if (count >= kLanes<T>) {
    Vector<T> largest_per_lane = load(values);
    for (i = kLanes<T>; i + kLanes<T> <= count; i += kLanes<T>) {
      const Vector<T> next = load(values + i);
      largest_per_lane = next > largest_per_lane ? next : largest_per_lane;
    }
    largest = max_lanes<T>(largest_per_lane);
  }
  for (; i < count; ++i) largest = std::max(largest, values[i]);
  return largest;
}

// The sum of a[i] * b[i] over i < count: one sum per lane, then the lanes'.
template <class T>
T dot(const T* a, const T* b, int64_t count) {
  Vector<T> sums = {};
  int64_t i = 0;
  for (; i + kLanes<T> <= count; i += kLanes<T>) sums += load(a + i) * load(b + i);
  T sum = sum_lanes<T>(sums);
  for (; i < count; ++i) sum += a[i] * b[i];
  return sum;
}

// The sum of values[0..count-1], likewise.
template <class T>
T sum_of(const T* values, int64_t count) {
  Vector<T> sums = {};
  int64_t i = 0;
  for (; i + kLanes<T> <= count; i += kLanes<T>) sums += load(values + i);
  T sum = sum_lanes<T>(sums);
  for (; i < count; ++i) sum += values[i];
  return sum;
}

}  // namespace simd
}  // namespace TG_ISA
}  // namespace tg::cpu

#pragma GCC diagnostic pop
