// Differentiable views (forward in tensor/view.h). The backward of a view maps
// the gradient back onto the base's shape: transpose it back, pad a slice with
// zeros, sum an expanded dim, reshape back.
#pragma once
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg {

Tensor view(const Tensor& x, const Shape& shape);
Tensor reshape(const Tensor& x, const Shape& shape);  // copies only when the strides force it
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
Tensor select(const Tensor& x, int64_t dim, int64_t index);
Tensor squeeze(const Tensor& x, int64_t dim);
Tensor unsqueeze(const Tensor& x, int64_t dim);
Tensor expand(const Tensor& x, const Shape& shape);
Tensor contiguous(const Tensor& x);
Tensor clone(const Tensor& x);
Tensor to_dtype(const Tensor& x, DType dtype);

}  // namespace tg
