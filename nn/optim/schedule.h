// Learning-rate schedules: a linear warm-up, then one of two shapes down to a floor.
//
// Cosine (nanoGPT's train.py, get_lr):
//   it <  warmup_iters:                lr = max_lr * (it + 1) / (warmup_iters + 1)
//   warmup_iters <= it < decay_iters:  ratio = (it - warmup_iters) / (decay_iters - warmup_iters)
//                                      lr = min_lr + 0.5 (1 + cos(pi ratio)) (max_lr - min_lr)
//   it >= decay_iters:                 lr = min_lr
//
// Warmup-stable-decay (the speedruns' "trapezoid": constant, then a linear cool-down
// over the last `cooldown` fraction of decay_iters, begun no earlier than the warm-up's end):
//   cooldown_start = max(warmup_iters, decay_iters - round(cooldown * decay_iters))
//   it <  warmup_iters:                as above
//   warmup_iters <= it < cooldown_start:  lr = max_lr
//   cooldown_start <= it < decay_iters:   lr = max_lr + (min_lr - max_lr) (it - cooldown_start) / (decay_iters - cooldown_start)
//   it >= decay_iters:                 lr = min_lr
//
// The warm-up's +1s make the first step (it = 0) use a small non-zero rate and
// step warmup_iters - 1 end just below max_lr; the decay starts at max_lr.
// (nanoGPT tests `it > decay_iters`; at it == decay_iters its cosine gives min_lr
// too, so the two agree everywhere, and ours also covers decay_iters == warmup_iters.)
#pragma once
#include <cstdint>

namespace tg::nn {

enum class ScheduleShape { Cosine, WarmupStableDecay };

struct LearningRateSchedule {
  ScheduleShape shape = ScheduleShape::Cosine;
  double max_lr = 1e-3;
  double min_lr = 1e-4;        // the floor; nanoGPT uses max_lr / 10
  int64_t warmup_iters = 100;
  int64_t decay_iters = 5000;  // the decay reaches min_lr here (nanoGPT's lr_decay_iters)
  double cooldown = 0.2;       // WarmupStableDecay: the fraction of decay_iters spent decaying

  void validate() const;       // non-negative rates and iterations, warmup_iters <= decay_iters, cooldown in [0, 1]
  double at(int64_t iteration) const;
  int64_t cooldown_start() const;  // WarmupStableDecay: the first step below max_lr after the warm-up
};

}  // namespace tg::nn
