// AdamW: the fused update kernel. Each line mirrors one torch call in
// torch/optim/adamw.py (_single_tensor_adamw), noted on the right.
#include "nn/functional/adamw.h"

#include <cmath>

#include "tensor/error.h"
#include "tensor/profile.h"
#include "tensor/threads.h"

namespace tg::nn {

void adamw_step(float* param, const float* grad, float* m, float* v, int64_t count, const AdamWHyperparameters& hyperparameters,
                int64_t step) {
  ProfileScope scope(ProfileFamily::adamw);
  scope.add_bytes(7.0 * static_cast<double>(count) * sizeof(float));  // reads p, g, m, v; writes p, m, v
  check(step >= 1, "adamw_step: step is 1-based, got ", step);
  check(count >= 0, "adamw_step: count must be non-negative, got ", count);
  check(hyperparameters.beta1 >= 0 && hyperparameters.beta1 < 1 && hyperparameters.beta2 >= 0 && hyperparameters.beta2 < 1,
        "adamw_step: betas must be in [0, 1), got (", hyperparameters.beta1, ", ", hyperparameters.beta2, ")");
  // Python evaluates these in double; torch then rounds each scalar to float in its kernel.
  const double lr = hyperparameters.lr, beta1 = hyperparameters.beta1, beta2 = hyperparameters.beta2;
  const float decay_factor = static_cast<float>(1.0 - lr * hyperparameters.weight_decay);
  const float beta1_f = static_cast<float>(beta1), one_minus_beta1 = static_cast<float>(1.0 - beta1);
  const float beta2_f = static_cast<float>(beta2), one_minus_beta2 = static_cast<float>(1.0 - beta2);
  const double bias_correction1 = 1.0 - std::pow(beta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(beta2, static_cast<double>(step));
  const float step_size = static_cast<float>(lr / bias_correction1);
  const float bias_correction2_sqrt = static_cast<float>(std::sqrt(bias_correction2));
  const float eps = hyperparameters.eps;
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
  for (int64_t i = 0; i < count; ++i) {
    const float g = grad[i];
    const float p = param[i] * decay_factor;                            // param.mul_(1 - lr * wd)
    const float m_new = std::fma(g, one_minus_beta1, m[i] * beta1_f);   // exp_avg.mul_(b1).add_(g, alpha=1-b1)
    const float v_new = v[i] * beta2_f + one_minus_beta2 * g * g;       // exp_avg_sq.mul_(b2).addcmul_(g, g, value=1-b2)
    const float denom = std::sqrt(v_new) / bias_correction2_sqrt + eps;  // (exp_avg_sq.sqrt() / bc2_sqrt).add_(eps)
    param[i] = p + (-step_size) * (m_new / denom);                     // param.addcdiv_(exp_avg, denom, value=-step_size)
    m[i] = m_new;
    v[i] = v_new;
  }
}

}  // namespace tg::nn
