// The learning-rate schedule of nanoGPT (train.py, get_lr): linear warm-up, then
// cosine decay to a floor.
//
//   it <  warmup_iters:                lr = max_lr * (it + 1) / (warmup_iters + 1)
//   warmup_iters <= it < decay_iters:  ratio = (it - warmup_iters) / (decay_iters - warmup_iters)
//                                      lr = min_lr + 0.5 (1 + cos(pi ratio)) (max_lr - min_lr)
//   it >= decay_iters:                 lr = min_lr
//
// The warm-up's +1s make the first step (it = 0) use a small non-zero rate and
// step warmup_iters - 1 end just below max_lr; the cosine starts at max_lr.
// (nanoGPT tests `it > decay_iters`; at it == decay_iters its cosine gives min_lr
// too, so the two agree everywhere, and ours also covers decay_iters == warmup_iters.)
#pragma once
#include <cstdint>

namespace tg::nn {

struct CosineSchedule {
  double max_lr = 1e-3;
  double min_lr = 1e-4;        // the floor; nanoGPT uses max_lr / 10
  int64_t warmup_iters = 100;
  int64_t decay_iters = 5000;  // the cosine reaches min_lr here (nanoGPT's lr_decay_iters)

  void validate() const;       // non-negative rates and iterations, warmup_iters <= decay_iters
  double at(int64_t iteration) const;
};

}  // namespace tg::nn
