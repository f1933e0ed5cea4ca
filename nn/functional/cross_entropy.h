// Cross-entropy loss of logits against target classes, as torch.nn.functional.cross_entropy
// with reduction='mean':
//
//   loss = (1 / N_valid) sum over rows i with targets_i != ignore_index of
//          -log softmax(logits_i)[targets_i]  =  logsumexp(logits_i) - logits_i[targets_i]
//
// logits (N, V) float32 or float64, targets (N) int64 -> a 0-d loss of the logits' dtype.
// (Any leading dims work too: logits (..., V) with targets (...), down to none:
// unbatched logits (V) with a 0-d target are one row, as in torch.) When every
// target is ignored the loss is 0/0 = NaN, as in torch.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100);
// The same loss composed of autograd ops (log_softmax, gather, sum, div).
Tensor cross_entropy_reference(const Tensor& logits, const Tensor& targets, int64_t ignore_index = -100);

}  // namespace tg::nn
