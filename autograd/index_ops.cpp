// Differentiable indexing, joining and splitting: each forward, then its
// backward. Indexing reads some elements, possibly several times; its backward
// adds each output gradient back where the element came from.
#include "tinygpt/autograd/index_ops.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/view_ops.h"
#include "tinygpt/tensor/concat.h"
#include "tinygpt/tensor/index.h"
#include "tinygpt/tensor/view.h"

namespace tg {

// y = x.index_select(dim, index):  dx = zeros(x.shape).index_add(dim, index, dy)
Tensor index_select(const Tensor& x, int64_t dim, const Tensor& index) {
  return record("index_select", {x, index}, raw::index_select(x, dim, index),
                [shape = x.shape(), dim, index = index.detach()](const Tensor& dy, const Needs& needs) {
                  return Grads{needs[0] ? raw::index_add(shape, dim, index, dy) : Tensor(), Tensor()};
                }, {index});
}

// y = x.gather(dim, index):  dx = zeros(x.shape).scatter_add(dim, index, dy)
Tensor gather(const Tensor& x, int64_t dim, const Tensor& index) {
  return record("gather", {x, index}, raw::gather(x, dim, index),
                [shape = x.shape(), dim, index = index.detach()](const Tensor& dy, const Needs& needs) {
                  return Grads{needs[0] ? raw::scatter_add(shape, dim, index, dy) : Tensor(), Tensor()};
                }, {index});
}

// out (..., C) = table (V, C)[ids (...)]:  dtable[v] = sum of dout over the positions where ids == v
Tensor embedding(const Tensor& table, const Tensor& ids) {
  return record("embedding", {table, ids}, raw::embedding(table, ids),
                [vocab_size = table.size(0), ids = ids.detach()](const Tensor& dout, const Needs& needs) {
                  return Grads{needs[0] ? raw::embedding_backward(vocab_size, ids, dout) : Tensor(), Tensor()};
                }, {ids});
}

// y = cat(x_0, x_1, ...) along dim:  dx_i = the slice of dy that x_i became (a view)
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  Tensor joined = raw::cat(tensors, dim);  // checks the shapes first
  std::vector<int64_t> sizes;
  for (const Tensor& t : tensors) sizes.push_back(t.size(dim));
  return record("cat", tensors, joined,
                [sizes, dim](const Tensor& dy, const Needs& needs) {
                  const std::vector<Tensor> pieces = raw::split(dy, sizes, dim);
                  Grads grads(pieces.size());
                  for (size_t i = 0; i < pieces.size(); ++i)
                    if (needs[i]) grads[i] = pieces[i];
                  return grads;
                });
}

// Each piece is a narrow view of x and carries narrow's backward (its gradient
// lands in its own part of dx, zero elsewhere); pieces used together add up.
std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  std::vector<Tensor> pieces = raw::split(x, sizes, dim);
  if (!any_requires_grad({x})) return pieces;
  int64_t start = 0;
  for (Tensor& piece : pieces) {
    const int64_t length = piece.size(dim);
    piece = narrow(x, dim, start, length);
    start += length;
  }
  return pieces;
}

std::vector<Tensor> split(const Tensor& x, int64_t chunk, int64_t dim) {
  std::vector<int64_t> sizes;
  for (const Tensor& piece : raw::split(x, chunk, dim)) sizes.push_back(piece.size(dim));
  return split(x, sizes, dim);
}

}  // namespace tg
