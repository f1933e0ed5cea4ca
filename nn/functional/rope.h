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
// The kernels (the angle tables, the turn forward and back): tensor/cpu/rope_kernels.h.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor rope(const Tensor& x, int64_t position_offset = 0, double base = 10000.0);
// The same composed of autograd ops (slices, mul, add, cat) with constant cos/sin tables.
Tensor rope_reference(const Tensor& x, int64_t position_offset = 0, double base = 10000.0);

}  // namespace tg::nn
