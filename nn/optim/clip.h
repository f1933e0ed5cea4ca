// Gradient clipping by the global norm, as torch.nn.utils.clip_grad_norm_:
//
//   norm  = sqrt(sum over every gradient element of g^2)
//   scale = max_norm / (norm + 1e-6);  when scale < 1 every gradient is multiplied by it
//
// Returns the norm before clipping (training logs it; a non-finite norm means
// the step should be skipped, which is the caller's decision). Parameters without
// a gradient are skipped. The sum runs over fixed-size chunks in double
// precision, added in order: the same value for any thread count.
#pragma once
#include <vector>

#include "tinygpt/nn/parameter_arena.h"

namespace tg::nn {

double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm);
// One loop over the arena's grads buffer.
double clip_grad_norm(const ParameterArena& arena, double max_norm);

// The global norm alone (no clipping).
double grad_norm(const std::vector<Tensor>& parameters);
double grad_norm(const ParameterArena& arena);

}  // namespace tg::nn
