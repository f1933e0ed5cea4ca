// RoPE's kernels, forward then backward (the op, its checks and its reference
// composition: nn/functional/rope.h).
//
// Shapes: x (B, NH, T, HS), HS even, read as HS/2 channel pairs (x_2i, x_2i+1)
// per vector. Tables cos, sin (T, HS/2) of the angles pos * theta_i, with
// pos = position_offset + t and theta_i = base^(-2i / HS).
//
// Forward: each pair turns by its angle,  x (B, NH, T, HS) -> y (B, NH, T, HS)
//
//   y_2i   = x_2i cos - x_2i+1 sin
//   y_2i+1 = x_2i sin + x_2i+1 cos
//
// Backward: a rotation's inverse is its transpose (the turn by -angle), so the
// backward is the same kernel run on the gradient with the sines negated,
// dy (B, NH, T, HS) -> dx (B, NH, T, HS):
//
//   dx_2i   =  dy_2i cos + dy_2i+1 sin
//   dx_2i+1 = -dy_2i sin + dy_2i+1 cos
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/shape.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h).
inline namespace TG_ISA {

// The angle by which channel pair i of a head of size HS turns at a position:
// position * base^(-2i / HS).
inline double rope_angle(int64_t position, int64_t pair, int64_t head_size, double base) {
  const double exponent = -2.0 * static_cast<double>(pair) / static_cast<double>(head_size);
  return static_cast<double>(position) * std::pow(base, exponent);
}

// The tables rope turns by: cos and sin of rope_angle(position_offset + t, i)
// for t in [0, T), i in [0, HS/2), two (T, HS/2) tables. Computed in double,
// then rounded, so float32 tables are correctly rounded.
template <class T>
inline void rope_tables(int64_t positions, int64_t head_size, int64_t position_offset, double base,
                        std::vector<T>& cosines, std::vector<T>& sines) {
  const int64_t pairs = head_size / 2;
  cosines.resize(positions * pairs);
  sines.resize(positions * pairs);
  for (int64_t t = 0; t < positions; ++t) {
    for (int64_t i = 0; i < pairs; ++i) {
      const double angle = rope_angle(position_offset + t, i, head_size, base);
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
inline void rope_rotate_row(const T* x, T* y, const T* cosines, const T* sines, int64_t pairs, T direction = 1) {
#pragma omp simd
  for (int64_t i = 0; i < pairs; ++i) {
    const T even = x[2 * i], odd = x[2 * i + 1];
    const T sine = direction * sines[i];
    y[2 * i] = even * cosines[i] - odd * sine;
    y[2 * i + 1] = even * sine + odd * cosines[i];
  }
}

// x (B, NH, T, HS) strided (last dim contiguous) -> y (B, NH, T, HS) contiguous,
// with the (T, HS/2) tables. direction +1 rotates forward; -1 rotates back (the backward).
template <class T>
void rope_kernel(const T* x, const Strides& x_strides, T* y, const Shape& shape, const std::vector<T>& cosines,
                 const std::vector<T>& sines, T direction) {
  const int64_t batch = shape[0], heads = shape[1], positions = shape[2], head_size = shape[3];
  const int64_t pairs = head_size / 2;
  const int64_t rows = batch * heads * positions;
#pragma omp parallel for schedule(static) if (rows * head_size >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t t = row % positions, h = (row / positions) % heads, b = row / (positions * heads);
    const T* x_row = x + b * x_strides[0] + h * x_strides[1] + t * x_strides[2];
    rope_rotate_row(x_row, y + row * head_size, cosines.data() + t * pairs, sines.data() + t * pairs, pairs, direction);
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
