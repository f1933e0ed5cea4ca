// Rotary position embedding (RoPE; Su et al. 2021, "RoFormer").
//
// x (B, NH, T, HS), HS even. Each pair of channels (a, b) of the vector at
// position pos = position_offset + t is rotated by the angle pos * theta_i, with
// theta_i = base^(-2i / HS) (or its rescaling: nn/functional/rope_frequencies.h):
//
//   y_a = x_a cos(pos theta_i) - x_b sin(pos theta_i)
//   y_b = x_a sin(pos theta_i) + x_b cos(pos theta_i)
//
// Which channels pair up (Rotary::pairing): *interleaved* (2i, 2i+1), as the
// RoFormer paper, the default and what tinygpt's GPT-2 models with
// --positional rope use; or *half* (i, i + HS/2), "rotate half", as GPT-NeoX,
// Llama, Qwen and every Hugging Face checkpoint (the modern block's presets).
// The two are the same up to a fixed permutation of the channels, so weights
// trained with one do not load into the other without permuting.
//
// x may be any strided view whose last dim is contiguous (q, k split out of a
// QKV projection). Returns a new contiguous (B, NH, T, HS) tensor. Float32 or float64.
// The kernels (the angle tables, the turn forward and back): tensor/cpu/rope_kernels.h.
#pragma once
#include <cstdint>

#include "tinygpt/nn/functional/rope_frequencies.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor rope(const Tensor& x, int64_t position_offset, const Rotary& rotary);
// Interleaved pairs, unscaled frequencies of `base`.
Tensor rope(const Tensor& x, int64_t position_offset = 0, double base = 10000.0);
// The same composed of autograd ops (slices, mul, add, cat) with constant cos/sin tables.
Tensor rope_reference(const Tensor& x, int64_t position_offset, const Rotary& rotary);
Tensor rope_reference(const Tensor& x, int64_t position_offset = 0, double base = 10000.0);

}  // namespace tg::nn
