// Differentiable reductions and softmax: each forward, then its backward.
//
// A reduction's output gradient dy has the output's shape; its backward first
// puts back the reduced dims as size 1 (the keepdim shape) and then broadcasts
// over them, so every input element sees the gradient of the output it went into.
#include "tinygpt/autograd/reduce_ops.h"

#include <algorithm>

#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/softmax.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// The output shape with keepdim = true: each reduced dim (all of them when dims is empty) becomes 1.
// The forward has already checked the dims.
Shape keepdim_shape(const Shape& shape, const std::vector<int64_t>& dims) {
  Shape kept = shape;
  const int64_t ndim = static_cast<int64_t>(shape.size());
  if (dims.empty()) std::fill(kept.begin(), kept.end(), 1);
  for (int64_t dim : dims)
    if (ndim > 0) kept[dim < 0 ? dim + ndim : dim] = 1;
  return kept;
}

// dy (the reduction's output shape) broadcast back over x's shape (a view, no copy).
Tensor expand_back(const Tensor& dy, const Shape& x_shape, const std::vector<int64_t>& dims) {
  return raw::expand(raw::reshape(dy, keepdim_shape(x_shape, dims)), x_shape);
}

// N, the number of elements each output is reduced from: the product of the
// reduced dims' sizes. (Not numel(x) / numel(y): that divides by zero when a
// dim that is kept has size 0.)
int64_t reduced_count(const Shape& shape, const std::vector<int64_t>& dims) {
  if (dims.empty() || shape.empty()) return numel(shape);
  int64_t count = 1;
  for (int64_t dim : dims) count *= shape[normalize_dim(dim, static_cast<int64_t>(shape.size()), "reduce")];
  return count;
}

}  // namespace

// y = sum of x over dims:  dx = dy broadcast over the reduced dims
Tensor sum(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return record("sum", {x}, raw::sum(x, dims, keepdim), [shape = x.shape(), dims](const Tensor& dy, const Needs&) {
    return Grads{expand_back(dy, shape, dims)};
  });
}

// y = sum / N:  dx = dy / N broadcast over the reduced dims
Tensor mean(const Tensor& x, const std::vector<int64_t>& dims, bool keepdim) {
  return record("mean", {x}, raw::mean(x, dims, keepdim), [shape = x.shape(), dims](const Tensor& dy, const Needs&) {
    const double count = static_cast<double>(reduced_count(shape, dims));
    return Grads{raw::mul(expand_back(dy, shape, dims), 1.0 / count)};
  });
}

// y = sum((x - mean)^2) / (N - c), c = 1 when unbiased else 0:
//   dx = dy * 2 (x - mean) / (N - c)
// (the mean's own dependence on x drops out: the deviations sum to zero).
Tensor var(const Tensor& x, const std::vector<int64_t>& dims, bool unbiased, bool keepdim) {
  const bool save = any_requires_grad({x});
  return record("var", {x}, raw::var(x, dims, unbiased, keepdim),
                [x = save ? x.detach() : Tensor(), dims, unbiased](const Tensor& dy, const Needs&) {
                  const double divisor = static_cast<double>(reduced_count(x.shape(), dims)) - (unbiased ? 1 : 0);
                  const Tensor deviation = raw::sub(x, raw::mean(x, dims, /*keepdim=*/true));
                  return Grads{raw::mul(raw::mul(deviation, expand_back(dy, x.shape(), dims)), 2.0 / divisor)};
                }, {x});
}

// values = max of x along dim:  dx = dy at the arg-max of each line, 0 elsewhere
// (ties: only the first maximum, the one `indices` names, receives the gradient).
raw::MaxResult max(const Tensor& x, int64_t dim, bool keepdim) {
  raw::MaxResult result = raw::max(x, dim, keepdim);
  const bool save = any_requires_grad({x});
  result.values = record("max", {x}, result.values,
                         [shape = x.shape(), dim, indices = save ? result.indices : Tensor()](const Tensor& dy, const Needs&) {
                           const std::vector<int64_t> dims{dim};
                           // positions 0..n-1 laid along dim, (.., n, ..), compared with the arg-max of
                           // each line, (.., 1, ..): broadcast, exactly one true per line.
                           Shape position_shape(shape.size(), 1);
                           int64_t size = 1;
                           if (!shape.empty()) {
                             const int64_t d = normalize_dim(dim, static_cast<int64_t>(shape.size()), "max");
                             size = position_shape[d] = shape[d];
                           }
                           const Tensor positions = raw::view(arange(size), position_shape);
                           const Tensor is_max = raw::eq(positions, raw::reshape(indices, keepdim_shape(shape, dims)));
                           return Grads{raw::where(is_max, expand_back(dy, shape, dims), scalar(0, dy.dtype()))};
                         }, {result.indices});
  return result;
}

// Indices are not differentiable.
Tensor argmax(const Tensor& x, int64_t dim, bool keepdim) { return raw::argmax(x, dim, keepdim); }

// y = softmax(x):  dx = y * (dy - sum(dy * y))
Tensor softmax(const Tensor& x, int64_t dim) {
  const Tensor y = raw::softmax(x, dim);
  const bool save = any_requires_grad({x});
  return record("softmax", {x}, y, [y = save ? y.detach() : Tensor(), dim](const Tensor& dy, const Needs&) {
    return Grads{raw::softmax_backward(y, dy, dim)};
  }, {y});
}

// y = log_softmax(x):  dx = dy - exp(y) * sum(dy)
Tensor log_softmax(const Tensor& x, int64_t dim) {
  const Tensor y = raw::log_softmax(x, dim);
  const bool save = any_requires_grad({x});
  return record("log_softmax", {x}, y, [y = save ? y.detach() : Tensor(), dim](const Tensor& dy, const Needs&) {
    return Grads{raw::log_softmax_backward(y, dy, dim)};
  }, {y});
}

}  // namespace tg
