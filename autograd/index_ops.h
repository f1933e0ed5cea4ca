// Differentiable indexing, joining and splitting (forward in tensor/index.h and
// tensor/concat.h). Index tensors get no gradient.
#pragma once
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg {

Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
Tensor embedding(const Tensor& table, const Tensor& ids);  // (V, C), ids (...) -> (..., C)
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
std::vector<Tensor> split(const Tensor& x, int64_t chunk, int64_t dim);

}  // namespace tg
