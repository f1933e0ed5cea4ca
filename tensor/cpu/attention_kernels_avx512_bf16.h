// Causal attention with its six products in bfloat16 (float32 sums), for
// mixed-precision training (train --dtype bf16): the same arguments and the
// same formulas as attention_forward_kernel and attention_backward_kernel
// (tensor/cpu/attention_kernels.h), with every operand of a product rounded to
// bfloat16 first:
//
//   scores  = scale * bf16(q_block) @ bf16(k)^T      softmax in float32
//   weights = bf16(softmax(scores))                   saved for the backward in bfloat16
//   y_block = weights @ bf16(v)
//   dP      = bf16(dY_block) @ bf16(v)^T            softmax backward in float32
//   dq      = bf16(dS) @ bf16(k)
//   dk     += bf16(dS)^T @ bf16(q_block)
//   dv     += weights^T @ bf16(dY_block)
//
// The softmax backward (dS from dP) reads the bfloat16 weights; its dS is
// rounded for the next two products anyway, to the same relative step. Saved
// in bfloat16 the weights take half the memory (B NH Tq Tk values per layer,
// the largest activation of a GPT at T = 256), and the backward needs no
// rounding of its own.
//
// Compiled with -mavx512bf16 in its own namespace (tensor/runtime/isa.h): call
// these only where cpu::bf16_gemm_kernel() is avx512_bf16 (nn/functional/attention.cpp does).
#pragma once
#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/cpu/kernel_arguments.h"

namespace tg::cpu::isa_avx512_bf16 {

void attention_forward_bf16(const HeadRows<float>& q, const HeadRows<float>& k, const HeadRows<float>& v, float* y,
                            bfloat16* weights, const AttentionShape& shape);
void attention_backward_bf16(const float* dy, const bfloat16* weights, const HeadRows<float>& q,
                             const HeadRows<float>& k, const HeadRows<float>& v, float* dq, float* dk, float* dv,
                             int64_t grad_row_stride, const AttentionShape& shape);

}  // namespace tg::cpu::isa_avx512_bf16
