// Activation checkpointing: trade compute for memory by keeping a function's
// input instead of its internals (Chen et al. 2016, "Training Deep Nets with
// Sublinear Memory Cost"; torch.utils.checkpoint).
//
//   forward:  y = function(x) under no-grad: the intermediate tensors are freed as
//             soon as function returns, and the tape gets one node that saved x.
//   backward: that node runs function(x') again with recording on, on x' = a
//             detached copy of x that requires grad, backpropagates dy through
//             the recomputed graph (a backward() inside backward(): it is
//             re-entrant), and hands x'.grad on as dx.
//
// Leaves the function reads (parameters) receive their gradients during that
// inner backward, added into their .grad exactly as the plain path adds them
// (so they land in a ParameterArena's buffer too). Because the recompute runs
// the same kernels on the same input, y, dx and every .grad equal the plain
// path's to the bit.
//
// Randomness: a function that draws from `generator` (dropout) must draw the
// same values when recomputed. The node records the generator's (seed, counter)
// before the forward, sets it back for the recompute, and afterwards restores
// the state the generator had just before the recompute, so later draws are
// those the plain path would make. Pass every generator the function draws from
// (one: a GPT's dropout generator); without it, recomputed masks differ.
//
// The function is called as it is when recording is off or `input` does not
// require grad (then nothing could be saved: leaves it reads still get their
// gradients from the ordinary tape). `input` must not be modified in place
// between the forward and the backward: the recompute reads it.
#pragma once
#include <functional>
#include <memory>

#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/tensor.h"

namespace tg {

using CheckpointedFunction = std::function<Tensor(const Tensor&)>;

Tensor activation_checkpoint(CheckpointedFunction function, const Tensor& input,
                             std::shared_ptr<Generator> generator = nullptr);

}  // namespace tg
