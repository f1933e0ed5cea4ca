#include "tinygpt/nn/optim/schedule.h"

#include <cmath>
#include <numbers>

#include "tinygpt/tensor/error.h"

namespace tg::nn {

void CosineSchedule::validate() const {
  check(max_lr >= 0 && min_lr >= 0, "CosineSchedule: learning rates must be non-negative, got max_lr=", max_lr,
        " min_lr=", min_lr);
  check(warmup_iters >= 0 && warmup_iters <= decay_iters, "CosineSchedule: needs 0 <= warmup_iters <= decay_iters, got ",
        warmup_iters, " and ", decay_iters);
}

double CosineSchedule::at(int64_t iteration) const {
  check(iteration >= 0, "CosineSchedule: iteration must be non-negative, got ", iteration);
  if (iteration < warmup_iters)
    return max_lr * static_cast<double>(iteration + 1) / static_cast<double>(warmup_iters + 1);
  if (iteration >= decay_iters) return min_lr;
  const double ratio = static_cast<double>(iteration - warmup_iters) / static_cast<double>(decay_iters - warmup_iters);
  const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * ratio));  // 1 -> 0
  return min_lr + coefficient * (max_lr - min_lr);
}

}  // namespace tg::nn
