// Causal scaled dot-product attention (Vaswani et al. 2017), the heart of a GPT block.
//
// Letters: B batch, NH heads, Tq queries, Tk keys (Tk >= Tq), HS head size, C = NH * HS.
//
//   q (B, NH, Tq, HS), k (B, NH, Tk, HS), v (B, NH, Tk, HS)  ->  y (B, Tq, C)
//
//   scores_ij  = q_i . k_j / sqrt(HS)                       for j <= Tk - Tq + i (causal)
//   weights_ij = softmax_j(scores_ij)                        (0 for the masked j)
//   y_i        = sum_j weights_ij v_j,  heads concatenated along the last dim
//
// Query i sits at absolute position Tk - Tq + i: with Tq == Tk this is the usual
// causal mask; with Tq < Tk the queries are the newest positions and k, v hold the
// earlier ones too (a KV cache during generation). The mask is never built as a
// tensor. q, k, v may be any strided views whose last dim is contiguous — in a GPT
// they are permuted slices of one fused QKV projection, and are read in place.
// y comes out contiguous with the heads already concatenated, ready for the output
// projection. Float32 or float64.
#pragma once
#include "tensor/tensor.h"

namespace tg::nn {

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v);
// The same composed of autograd ops: matmul, a masked_fill with a materialised
// (Tq, Tk) mask, softmax, matmul, permute, reshape.
Tensor causal_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v);
// The attention weights of one call, (B, NH, Tq, Tk), zeros above the causal
// diagonal (for inspection; not differentiable).
Tensor causal_attention_weights(const Tensor& q, const Tensor& k);
// The causal mask as a (Tq, Tk) bool tensor: true where key j lies after query
// i's position Tk - Tq + i (what causal_attention skips without building it).
Tensor causal_mask(int64_t queries, int64_t keys);

// One query of one head against `keys` keys and values, all of which it sees
// (a generation step: causal_attention's kernel with Tq = 1, and the fused
// decode step, models/gpt_decode.cpp, which so gets the same numbers).
//   q (HS), k (keys, HS) rows k_row_stride apart, v likewise -> y (HS); scores (keys) is scratch.
void attend_one_query(const float* q, const float* k, const float* v, int64_t keys, int64_t head_size,
                      int64_t k_row_stride, int64_t v_row_stride, float* scores, float* y);

}  // namespace tg::nn
