// Parameter initialisers: fill an existing tensor in place (it may be a view
// into a ParameterArena) from a seeded Generator. The draws are counter-based,
// so the values do not depend on the thread count.
//
// For a 2-D weight (rows, cols), fan_in = cols and fan_out = rows, as PyTorch
// computes them (a Linear weight (out, in), an Embedding table (V, C)).
#pragma once
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::nn::init {

// N(mean, std^2) elementwise.
void normal_(const Tensor& tensor, double mean, double std, Generator& generator);
// Glorot & Bengio 2010: U(-a, a), a = sqrt(6 / (fan_in + fan_out)).
void xavier_uniform_(const Tensor& tensor, Generator& generator);
// N(0, std^2), std = sqrt(2 / (fan_in + fan_out)).
void xavier_normal_(const Tensor& tensor, Generator& generator);
void constant_(const Tensor& tensor, double value);

}  // namespace tg::nn::init
