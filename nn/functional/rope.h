// Rotary position embedding (RoPE; Su et al. 2021, "RoFormer").
//
// x (B, NH, T, HS), HS even. Each pair of channels (x_2i, x_2i+1) of the vector at
// position pos = position_offset + t is rotated by the angle pos * theta_i, with
// theta_i = base^(-2i / HS):
//
//   y_2i   = x_2i cos(pos theta_i) - x_2i+1 sin(pos theta_i)
//   y_2i+1 = x_2i sin(pos theta_i) + x_2i+1 cos(pos theta_i)
//
// Layout: we rotate *interleaved* pairs (2i, 2i+1), as the RoFormer paper does.
// GPT-NeoX and LLaMA's reference code rotate the *half-split* pairs (i, i + HS/2)
// instead; the two are the same up to a fixed permutation of the channels, so
// weights trained with one layout do not load into the other without permuting.
//
// x may be any strided view whose last dim is contiguous (q, k split out of a
// QKV projection). Returns a new contiguous (B, NH, T, HS) tensor. Float32 or float64.
#pragma once
#include <cmath>
#include <cstdint>
#include <vector>

#include "tensor/tensor.h"

namespace tg::nn {

Tensor rope(const Tensor& x, int64_t position_offset = 0, double base = 10000.0);
// The same composed of autograd ops (slices, mul, add, cat) with constant cos/sin tables.
Tensor rope_reference(const Tensor& x, int64_t position_offset = 0, double base = 10000.0);
// The angle pair i of a head of size HS turns by at position pos: pos * base^(-2i / HS).
double rope_angle(int64_t position, int64_t pair, int64_t head_size, double base);

// The tables rope turns by: cos and sin of rope_angle(position_offset + t, i)
// for t in [0, T), i in [0, HS/2), two (T, HS/2) tables. Computed in double,
// then rounded, so float32 tables are correctly rounded.
template <class T>
inline void rope_tables(int64_t positions, int64_t head_size, int64_t position_offset, double base, std::vector<T>& cosines,
                        std::vector<T>& sines) {
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

// One vector of HS = 2 * pairs channels: pair i of x turned by the angle whose
// cosine and sine are cosines[i], sines[i] (direction -1 turns back: the
// backward). The kernel under rope, and the fused decode step's: same numbers.
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

}  // namespace tg::nn
