// AdamW: the checks and the scalars of one update, computed as torch computes
// them; the loop itself is adamw_kernel (adamw_kernels.h), from the kernel table.
#include "nn/functional/adamw.h"

#include <cmath>

#include "nn/functional/kernel_table.h"
#include "tensor/error.h"
#include "tensor/profile.h"

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
  const AdamWScalars scalars{decay_factor, beta1_f, one_minus_beta1, beta2_f, one_minus_beta2, step_size, eps,
                             bias_correction2_sqrt};
  optimizer_kernels().adamw(param, grad, m, v, count, scalars);
}

}  // namespace tg::nn
