// Joining and splitting along a dim.
#pragma once
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

// Tensors equal in every dim but `dim`, joined along it (a new tensor).
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);
// Consecutive views of x along `dim` with the given sizes (they must sum to its size).
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim);
// Views of `chunk` elements each along `dim` (the last may be smaller). A dim of
// size 0 gives one empty piece (the only case where `chunk` may be 0), as in torch.
std::vector<Tensor> split(const Tensor& x, int64_t chunk, int64_t dim);

}  // namespace tg::raw
