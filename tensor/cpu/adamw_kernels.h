// AdamW's update loop (the op, its checks and its scalars: adamw.cpp; the
// formulas: adamw.h). Each line mirrors one torch call in torch/optim/adamw.py
// (_single_tensor_adamw), noted on the right.
#pragma once
#include <cmath>
#include <cstdint>

#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cpu {

// One copy per instruction set (tensor/runtime/isa.h).
inline namespace TG_ISA {

// param, grad, m, v: `count` floats each -> param, m, v updated in place, on
// the calling thread (adamw_step shares the elements out).
inline void adamw_kernel(float* param, const float* grad, float* m, float* v, int64_t count, const AdamWScalars& s) {
#pragma omp simd
  for (int64_t i = 0; i < count; ++i) {
    const float g = grad[i];
    const float p = param[i] * s.decay_factor;                              // param.mul_(1 - lr * wd)
    const float m_new = std::fma(g, s.one_minus_beta1, m[i] * s.beta1);      // exp_avg.mul_(b1).add_(g, alpha=1-b1)
    const float v_new = v[i] * s.beta2 + s.one_minus_beta2 * g * g;          // exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)
    const float denom = std::sqrt(v_new) / s.bias_correction2_sqrt + s.eps;  // (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps)
    param[i] = p + (-s.step_size) * (m_new / denom);                        // param.addcdiv_(exp_avg, denom, value=-step_size)
    m[i] = m_new;
    v[i] = v_new;
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
