// Reductions over any set of dims, with keepdim (as in PyTorch). An empty dims
// list reduces over every dim. Float32 sums accumulate in double precision
// per output element, in a fixed order, so results do not depend on the thread count.
// Empty reductions follow PyTorch: sum is 0, mean and var are NaN, max throws.
#pragma once
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

Tensor sum(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims = {}, bool keepdim = false);
// Variance with Bessel's correction when `unbiased` (torch.var's default).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims = {}, bool unbiased = true, bool keepdim = false);

// Largest value along one dim and its index (the first one, on ties).
struct MaxResult {
  Tensor values;   // x's dtype
  Tensor indices;  // int64
};
MaxResult max(const Tensor& x, int64_t dim, bool keepdim = false);
Tensor max(const Tensor& x);  // over everything, 0-d
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim = false);

// Sums a broadcast result back down to `shape` (the un-broadcasting every
// backward of a broadcasting op needs). `shape` must broadcast to x's shape.
Tensor sum_to_shape(const Tensor& x, const Shape& shape);

}  // namespace tg::raw
