#include "tinygpt/nn/optim/schedule.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "tinygpt/tensor/error.h"

namespace tg::nn {

void LearningRateSchedule::validate() const {
  check(max_lr >= 0 && min_lr >= 0, "LearningRateSchedule: learning rates must be non-negative, got max_lr=", max_lr,
        " min_lr=", min_lr);
  check(warmup_iters >= 0 && warmup_iters <= decay_iters,
        "LearningRateSchedule: needs 0 <= warmup_iters <= decay_iters, got ", warmup_iters, " and ", decay_iters);
  check(cooldown >= 0 && cooldown <= 1, "LearningRateSchedule: cooldown must be in [0, 1], got ", cooldown);
}

int64_t LearningRateSchedule::cooldown_start() const {
  const auto cooldown_iters = static_cast<int64_t>(std::llround(cooldown * static_cast<double>(decay_iters)));
  return std::max(warmup_iters, decay_iters - cooldown_iters);
}

double LearningRateSchedule::at(int64_t iteration) const {
  check(iteration >= 0, "LearningRateSchedule: iteration must be non-negative, got ", iteration);
  if (iteration < warmup_iters)
    return max_lr * static_cast<double>(iteration + 1) / static_cast<double>(warmup_iters + 1);
  if (iteration >= decay_iters) return min_lr;
  if (shape == ScheduleShape::WarmupStableDecay) {
    const int64_t start = cooldown_start();
    if (iteration < start) return max_lr;
    const double ratio = static_cast<double>(iteration - start) / static_cast<double>(decay_iters - start);
    return max_lr + ratio * (min_lr - max_lr);
  }
  const double ratio = static_cast<double>(iteration - warmup_iters) / static_cast<double>(decay_iters - warmup_iters);
  const double coefficient = 0.5 * (1.0 + std::cos(std::numbers::pi * ratio));  // 1 -> 0
  return min_lr + coefficient * (max_lr - min_lr);
}

}  // namespace tg::nn
