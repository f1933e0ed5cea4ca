// One fused AdamW update (Loshchilov & Hutter 2019) over a flat float array, with
// the exact sequence of float operations of torch.optim.AdamW (torch 1.13,
// foreach=False), so the two agree to float rounding:
//
//   p  = p * (1 - lr * weight_decay)              decoupled weight decay, applied first
//   m  = beta1 m + (1 - beta1) g
//   v  = beta2 v + (1 - beta2) g^2
//   p  = p - lr / (1 - beta1^t) * m / (sqrt(v) / sqrt(1 - beta2^t) + eps)
//
// t = step is 1-based. The scalar factors are computed in double, as Python does,
// then rounded to float. One pass reads p, g, m, v and writes p, m, v.
#pragma once
#include <cstdint>
#include <vector>

namespace tg::nn {

// The hyperparameters of one update, as floats. No defaults: the optimiser
// (nn/optim/adamw.h, AdamWOptions) fills them for each parameter group.
struct AdamWHyperparameters {
  float lr;
  float beta1;
  float beta2;
  float eps;
  float weight_decay;
};

// param, grad, m, v: `count` floats each (m and v start at zero before step 1).
void adamw_step(float* param, const float* grad, float* m, float* v, int64_t count, const AdamWHyperparameters& hyperparameters,
                int64_t step);

// A stretch of the flat buffers and its hyperparameters (a parameter group's
// neighbouring parameters, nn/optim/adamw.h): `count` elements from `offset` in
// param and grad, from `state_offset` in m and v (which hold moments only for the
// parameters AdamW updates, when another optimiser takes the rest).
struct AdamWSlice {
  int64_t offset, state_offset, count;
  AdamWHyperparameters hyperparameters;
};
// The same update for every slice of param, grad, m and v, in one parallel
// region: each thread takes a contiguous share of all the slices' elements
// (one wake-up of the threads per step instead of one per slice). Elementwise,
// so the result does not depend on the share.
void adamw_step(float* param, const float* grad, float* m, float* v, const std::vector<AdamWSlice>& slices,
                int64_t step);

}  // namespace tg::nn
