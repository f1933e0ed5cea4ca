// RoPE's kernels, forward then backward (the op, its checks and its reference
// composition: nn/functional/rope.h).
//
// Shapes: x (B, NH, T, HS), HS even, read as HS/2 channel pairs per vector. Tables
// cos, sin (T, HS/2) of the angles pos * inv_freq_i, with pos = position_offset + t
// and inv_freq_i = base^(-2i / HS) (or a rescaling of it: nn::Rotary).
//
// Which channels make pair i (RopePairing):
//   interleaved (RoFormer):                  (x_2i, x_2i+1)
//   half, rotate-half (GPT-NeoX, Llama, HF): (x_i,  x_i+HS/2)
// Written below for interleaved, with (a, b) the pair:
//
// Forward: each pair turns by its angle,  x (B, NH, T, HS) -> y (B, NH, T, HS)
//
//   y_a = x_a cos - x_b sin
//   y_b = x_a sin + x_b cos
//
// Backward: a rotation's inverse is its transpose (the turn by -angle), so the
// backward is the same kernel run on the gradient with the sines negated,
// dy (B, NH, T, HS) -> dx (B, NH, T, HS):
//
//   dx_a =  dy_a cos + dy_b sin
//   dx_b = -dy_a sin + dy_b cos
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/cpu/rope_pairing.h"
#include "tinygpt/tensor/shape.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h).
inline namespace TG_ISA {

// How fast channel pair i of a head of size HS turns, in radians per position:
// base^(-2i / HS), before any rescaling (nn::Rotary).
inline double rope_inverse_frequency(int64_t pair, int64_t head_size, double base) {
  return std::pow(base, -2.0 * static_cast<double>(pair) / static_cast<double>(head_size));
}

// The angle by which channel pair i turns at a position: position * base^(-2i / HS).
inline double rope_angle(int64_t position, int64_t pair, int64_t head_size, double base) {
  return static_cast<double>(position) * rope_inverse_frequency(pair, head_size, base);
}

// The tables rope turns by: cos and sin of (position_offset + t) * inverse_frequencies[i]
// for t in [0, T), i in [0, HS/2), two (T, HS/2) tables. Computed in double,
// then rounded, so float32 tables are correctly rounded.
template <class T>
inline void rope_tables(int64_t positions, int64_t position_offset, const std::vector<double>& inverse_frequencies,
                        std::vector<T>& cosines, std::vector<T>& sines) {
  const int64_t pairs = static_cast<int64_t>(inverse_frequencies.size());
  cosines.resize(positions * pairs);
  sines.resize(positions * pairs);
  for (int64_t t = 0; t < positions; ++t) {
    for (int64_t i = 0; i < pairs; ++i) {
      const double angle = static_cast<double>(position_offset + t) * inverse_frequencies[i];
      cosines[t * pairs + i] = static_cast<T>(std::cos(angle));
      sines[t * pairs + i] = static_cast<T>(std::sin(angle));
    }
  }
}

// One vector of HS = 2 * pairs channels, x (HS) -> y (HS): pair i turned by the
// angle whose cosine and sine are cosines[i], sines[i]; direction -1 turns it
// back (the backward). The kernel under rope, and the fused decode step's
// (models/gpt_decode.cpp): same numbers.
template <class T>
inline void rope_rotate_row(const T* x, T* y, const T* cosines, const T* sines, int64_t pairs, T direction,
                            nn::RopePairing pairing) {
  if (pairing == nn::RopePairing::Interleaved) {
#pragma omp simd
    for (int64_t i = 0; i < pairs; ++i) {
      const T even = x[2 * i], odd = x[2 * i + 1];
      const T sine = direction * sines[i];
      y[2 * i] = even * cosines[i] - odd * sine;
      y[2 * i + 1] = even * sine + odd * cosines[i];
    }
  } else {
#pragma omp simd
    for (int64_t i = 0; i < pairs; ++i) {
      const T first = x[i], second = x[i + pairs];
      const T sine = direction * sines[i];
      y[i] = first * cosines[i] - second * sine;
      y[i + pairs] = first * sine + second * cosines[i];
    }
  }
}

// x (B, NH, T, HS) strided (last dim contiguous) -> y (B, NH, T, HS) contiguous,
// with the (T, HS/2) tables. direction +1 rotates forward; -1 rotates back (the backward).
template <class T>
void rope_kernel(const T* x, const Strides& x_strides, T* y, const Shape& shape, const std::vector<T>& cosines,
                 const std::vector<T>& sines, T direction, nn::RopePairing pairing) {
  const int64_t batch = shape[0], heads = shape[1], positions = shape[2], head_size = shape[3];
  const int64_t pairs = head_size / 2;
  const int64_t rows = batch * heads * positions;
#pragma omp parallel for schedule(static) if (rows * head_size >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t t = row % positions, h = (row / positions) % heads, b = row / (positions * heads);
    const T* x_row = x + b * x_strides[0] + h * x_strides[1] + t * x_strides[2];
    rope_rotate_row(x_row, y + row * head_size, cosines.data() + t * pairs, sines.data() + t * pairs, pairs, direction,
                    pairing);
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
