// AdamW: the checks and the scalars of one update, computed as torch computes
// them, and the threads' shares; the loop itself is adamw_kernel
// (tensor/cpu/adamw_kernels.h), from the kernel table.
#include "tinygpt/nn/functional/adamw.h"

#include <omp.h>

#include <algorithm>
#include <cmath>

#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::nn {

namespace {

// The checks, then the scalars of one update, computed as torch computes them.
cpu::AdamWScalars adamw_scalars(const AdamWHyperparameters& hyperparameters, int64_t step) {
  check(step >= 1, "adamw_step: step is 1-based, got ", step);
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
  return cpu::AdamWScalars{decay_factor, beta1_f,   one_minus_beta1, beta2_f, one_minus_beta2,
                      step_size,    hyperparameters.eps, bias_correction2_sqrt};
}

}  // namespace

void adamw_step(float* param, const float* grad, float* m, float* v, int64_t count, const AdamWHyperparameters& hyperparameters,
                int64_t step) {
  check(count >= 0, "adamw_step: count must be non-negative, got ", count);
  adamw_step(param, grad, m, v, {AdamWSlice{0, 0, count, hyperparameters}}, step);
}

void adamw_step(float* param, const float* grad, float* m, float* v, const std::vector<AdamWSlice>& slices,
                int64_t step) {
  ProfileScope scope(ProfileFamily::adamw);
  std::vector<cpu::AdamWScalars> scalars;
  int64_t total = 0;
  for (const AdamWSlice& slice : slices) {
    check(slice.offset >= 0 && slice.state_offset >= 0 && slice.count >= 0,
          "adamw_step: a slice needs offset, state_offset and count >= 0, got ", slice.offset, ", ", slice.state_offset,
          " and ", slice.count);
    scalars.push_back(adamw_scalars(slice.hyperparameters, step));
    total += slice.count;
  }
  scope.add_bytes(7.0 * static_cast<double>(total) * sizeof(float));  // reads p, g, m, v; writes p, m, v
  const auto adamw = cpu::optimizer_kernels().adamw;
#pragma omp parallel if (total >= kParallelThreshold)
  {
    const int64_t threads = omp_get_num_threads(), thread = omp_get_thread_num();
    const int64_t begin = total * thread / threads, end = total * (thread + 1) / threads;  // this thread's share
    int64_t start = 0;  // of the slice at hand, counted over all slices
    for (size_t index = 0; index < slices.size(); ++index) {
      const int64_t first = std::max(begin, start), last = std::min(end, start + slices[index].count);
      const int64_t at = slices[index].offset + (first - start), state_at = slices[index].state_offset + (first - start);
      if (first < last) adamw(param + at, grad + at, m + state_at, v + state_at, last - first, scalars[index]);
      start += slices[index].count;
    }
  }
}

}  // namespace tg::nn
