// Softmax and log-softmax along one dim, numerically stable (the row maximum is
// subtracted before exponentiating).
//
// The accumulation policy of every softmax in tinygpt, written down here once:
//
// - Sums in double: raw::softmax / log_softmax and their backward (this file),
//   as the reductions (tensor/reduce.h) do. This is the clear path that
//   autograd's softmax, the *_reference compositions and the walk-through use,
//   and the reference of the float64 gradient checks: a float32 row's sum
//   picks up no float rounding, whatever the row length.
// - Sums in the working precision (float for float32): the fused hot kernels,
//   causal attention's rows (tensor/cpu/attention_kernels.h) and
//   cross-entropy's logsumexp (nn/functional/cross_entropy.cpp). They run over
//   every score and every logit of a training step, each row one vector pass
//   over floats; their rounding stays well within the 1e-5 by which the tests
//   compare them with their double-summed references.
// - Double throughout, with std::exp: sampling's probabilities
//   (models/sampling.cpp), one row of V per generated token, summed against the
//   top-p mass and a uniform draw; speed does not matter there.
//
// Those three cannot call the functions below without changing their numbers;
// each says so where it computes its own.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// The backward rules, given the forward's output y and the gradient dy:
//   softmax:     dx = y * (dy - sum(dy * y, dim))
//   log_softmax: dx = dy - exp(y) * sum(dy, dim)
Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim);
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim);

}  // namespace tg::raw
