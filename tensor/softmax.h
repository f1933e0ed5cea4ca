// Softmax and log-softmax along one dim, numerically stable (the row maximum is
// subtracted before exponentiating).
#pragma once
#include "tensor/tensor.h"

namespace tg::raw {

Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

// The backward rules, given the forward's output y and the gradient dy:
//   softmax:     dx = y * (dy - sum(dy * y, dim))
//   log_softmax: dx = dy - exp(y) * sum(dy, dim)
Tensor softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim);
Tensor log_softmax_backward(const Tensor& y, const Tensor& dy, int64_t dim);

}  // namespace tg::raw
