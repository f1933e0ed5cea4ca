// Differentiable reductions and softmax (forward in tensor/reduce.h, tensor/softmax.h).
#pragma once
#include <vector>

#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/tensor.h"

namespace tg {

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false);
// values are differentiable (the gradient goes to the arg-max); indices are not.
raw::MaxResult max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor softmax(const Tensor& x, int64_t dim);
Tensor log_softmax(const Tensor& x, int64_t dim);

}  // namespace tg
