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
// projection. Float32 or float64. The kernels, forward and backward side by side,
// with the formulas of the backward: tensor/cpu/attention_kernels.h.
//
// products bfloat16 (float32 q, k, v only; the default float32 means the
// operands' own type) is mixed-precision training, as for linear_product
// (autograd/linear_op.h): the six products of forward and backward take
// operands rounded to bfloat16 and sum in float32, the softmax weights are
// saved in bfloat16; the softmax and its backward compute in float32
// (tensor/cpu/attention_kernels_avx512_bf16.h).
// Only where the CPU has AVX512-BF16 (cpu::bf16_gemm_kernel()): elsewhere,
// where bfloat16 products would be widened to float32, they run in float32.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v, DType products = DType::Float32);
// The same on the fused projection qkv (B, T, 3C), whose last dim holds q, k and
// v side by side, each (NH, HS): what split_heads (nn/attention.h) makes
// without RoPE. Its backward writes dq, dk and dv straight into one (B, T, 3C)
// gradient, where three views of qkv would each get a zero-filled (B, T, 3C)
// gradient of their own, added up afterwards.
Tensor causal_attention_qkv(const Tensor& qkv, int64_t heads, DType products = DType::Float32);
// The same composed of autograd ops: matmul, a masked_fill with a materialised
// (Tq, Tk) mask, softmax, matmul, permute, reshape.
Tensor causal_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v);
// The causal mask as a (Tq, Tk) bool tensor: true where key j lies after query
// i's position Tk - Tq + i (what causal_attention skips without building it).
Tensor causal_mask(int64_t queries, int64_t keys);

}  // namespace tg::nn
