// Dropout (Srivastava et al. 2014): in training, zero each element with
// probability p and scale the survivors by 1 / (1 - p), so the expected value is
// unchanged; in evaluation (training == false) or with p == 0, the identity.
//
// The mask is counter-based: element i's fate is a pure function of the
// generator's (seed, counter + i), so it is the same for any thread count, and the
// backward recomputes it from those two numbers instead of storing it. One 64-bit
// draw decides two elements, so each call advances the generator by ceil(numel / 2).
#pragma once
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor dropout(const Tensor& x, double p, bool training, Generator& generator);
// The same composed of autograd ops: x * mask * (1 / (1 - p)), with the mask (1
// kept, 0 dropped) a constant drawn exactly as dropout draws it. From the same
// generator state it gives dropout's values and gradients, and advances the
// generator as far.
Tensor dropout_reference(const Tensor& x, double p, bool training, Generator& generator);

}  // namespace tg::nn
