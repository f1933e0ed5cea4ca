// Indexing with integer tensors: rows of a table, elements along a dim.
// Indices are int64; an index out of range throws naming the index, the dim and
// the shape.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

// Slices of x along `dim` at `index` (1-D): the result has index.numel() at `dim`.
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index);
// out[i][j] = x[i][index[i][j]] (for dim 1; likewise for any dim), as torch.gather.
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index);
// The embedding lookup: rows of `table` (V, C) for ids of any shape -> ids.shape + (C,).
Tensor embedding(const Tensor& table, const Tensor& ids);

// Backward helpers (accumulate; repeated indices add up):
// out = zeros(shape); out.index_select(dim, index) += source
Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& source);
// out = zeros(shape); out.gather(dim, index) += source  (torch.scatter_add)
Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& source);
// table gradient (V, C) from ids and the gradient of the lookup (ids.shape + (C,))
Tensor embedding_backward(int64_t vocab_size, const Tensor& ids, const Tensor& grad_rows);

}  // namespace tg::raw
