#include "tinygpt/tensor/shape.h"

#include "tinygpt/tensor/error.h"

namespace tg {

int64_t numel(const Shape& shape, const char* op) {
  int64_t nonzero_product = 1;
  bool empty = false;
  for (int64_t size : shape) {
    if (size == 0)
      empty = true;
    else if (__builtin_mul_overflow(nonzero_product, size, &nonzero_product))
      fail(op, ": shape ", shape, " is too large: its nonzero sizes multiply past INT64_MAX");
  }
  return empty ? 0 : nonzero_product;
}

Strides contiguous_strides(const Shape& shape) {
  Strides strides(shape.size());
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    strides[d] = stride;
    stride = checked_mul(stride, shape[d], "contiguous_strides");
  }
  return strides;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t product = 0;
  if (__builtin_mul_overflow(a, b, &product)) fail(op, ": ", a, " * ", b, " overflows int64");
  return product;
}

int64_t checked_add(int64_t a, int64_t b, const char* op) {
  int64_t sum = 0;
  if (__builtin_add_overflow(a, b, &sum)) fail(op, ": ", a, " + ", b, " overflows int64");
  return sum;
}

std::string shape_str(const Shape& shape) { return detail::dims_text(shape); }

Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const size_t ndim = std::max(a.size(), b.size());
  Shape out(ndim);
  for (size_t i = 0; i < ndim; ++i) {
    const int64_t size_a = i < ndim - a.size() ? 1 : a[i - (ndim - a.size())];
    const int64_t size_b = i < ndim - b.size() ? 1 : b[i - (ndim - b.size())];
    check(size_a == size_b || size_a == 1 || size_b == 1, op, ": shapes ", a, " and ", b,
          " cannot be broadcast together (dim ", i, ": ", size_a, " vs ", size_b, ")");
    out[i] = size_a == 1 ? size_b : size_a;
  }
  return out;
}

int64_t normalize_dim(int64_t dim, int64_t ndim, const char* op) {
  const int64_t lowest = ndim == 0 ? -1 : -ndim;
  const int64_t highest = ndim == 0 ? 0 : ndim - 1;
  check(dim >= lowest && dim <= highest, op, ": dim ", dim, " is out of range for a tensor with ", ndim,
        " dims (expected ", lowest, "..", highest, ")");
  return dim < 0 ? dim + std::max<int64_t>(ndim, 1) : dim;
}

}  // namespace tg
