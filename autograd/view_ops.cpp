// Differentiable views: each forward (a raw view, no copy), then its backward,
// which maps the output gradient back onto the input's shape.
#include "tinygpt/autograd/view_ops.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// A zero gradient for the whole input with `dy` written into the part `part_of` selects.
template <class PartOf>
Tensor scatter_into_zeros(const Shape& shape, const Tensor& dy, PartOf part_of) {
  Tensor grad = zeros(shape, dy.dtype());
  raw::copy_(part_of(grad), dy);
  return grad;
}

}  // namespace

// view/reshape: the gradient is reshaped back.
Tensor view(const Tensor& x, const Shape& shape) {
  return record("view", {x}, raw::view(x, shape),
                [shape = x.shape()](const Tensor& dy, const Needs&) { return Grads{raw::reshape(dy, shape)}; });
}

Tensor reshape(const Tensor& x, const Shape& shape) {
  return record("reshape", {x}, raw::reshape(x, shape),
                [shape = x.shape()](const Tensor& dy, const Needs&) { return Grads{raw::reshape(dy, shape)}; });
}

// transpose: transposing the gradient the same way undoes it.
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  return record("transpose", {x}, raw::transpose(x, dim0, dim1),
                [dim0, dim1](const Tensor& dy, const Needs&) { return Grads{raw::transpose(dy, dim0, dim1)}; });
}

// permute: the gradient goes through the inverse permutation.
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  Tensor y = raw::permute(x, dims);
  std::vector<int64_t> inverse(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) inverse[normalize_dim(dims[i], x.dim(), "permute")] = static_cast<int64_t>(i);
  return record("permute", {x}, y,
                [inverse](const Tensor& dy, const Needs&) { return Grads{raw::permute(dy, inverse)}; });
}

// slice/narrow/select: the gradient is zero outside the part that was taken.
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  return record("slice", {x}, raw::slice(x, dim, start, end, step),
                [shape = x.shape(), dim, start, end, step](const Tensor& dy, const Needs&) {
                  return Grads{scatter_into_zeros(shape, dy, [&](const Tensor& g) { return raw::slice(g, dim, start, end, step); })};
                });
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  return record("narrow", {x}, raw::narrow(x, dim, start, length),
                [shape = x.shape(), dim, start, length](const Tensor& dy, const Needs&) {
                  return Grads{scatter_into_zeros(shape, dy, [&](const Tensor& g) { return raw::narrow(g, dim, start, length); })};
                });
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  return record("select", {x}, raw::select(x, dim, index),
                [shape = x.shape(), dim, index](const Tensor& dy, const Needs&) {
                  return Grads{scatter_into_zeros(shape, dy, [&](const Tensor& g) { return raw::select(g, dim, index); })};
                });
}

// squeeze/unsqueeze: the gradient gets its size-1 dim back (or loses it).
Tensor squeeze(const Tensor& x, int64_t dim) {
  return record("squeeze", {x}, raw::squeeze(x, dim),
                [shape = x.shape()](const Tensor& dy, const Needs&) { return Grads{raw::reshape(dy, shape)}; });
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  return record("unsqueeze", {x}, raw::unsqueeze(x, dim),
                [shape = x.shape()](const Tensor& dy, const Needs&) { return Grads{raw::reshape(dy, shape)}; });
}

// expand: every copy of an element sends its gradient back to it, so sum them.
Tensor expand(const Tensor& x, const Shape& shape) {
  return record("expand", {x}, raw::expand(x, shape),
                [shape = x.shape()](const Tensor& dy, const Needs&) { return Grads{raw::sum_to_shape(dy, shape)}; });
}

// contiguous/clone: same values, so the gradient passes through unchanged.
Tensor contiguous(const Tensor& x) {
  return record("contiguous", {x}, raw::contiguous(x), [](const Tensor& dy, const Needs&) { return Grads{dy}; });
}

Tensor clone(const Tensor& x) {
  return record("clone", {x}, raw::clone(x), [](const Tensor& dy, const Needs&) { return Grads{dy}; });
}

// to_dtype: the gradient is converted back to the input's dtype.
Tensor to_dtype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  return record("to_dtype", {x}, raw::to_dtype(x, dtype),
                [from = x.dtype()](const Tensor& dy, const Needs&) { return Grads{raw::to_dtype(dy, from)}; });
}

}  // namespace tg
