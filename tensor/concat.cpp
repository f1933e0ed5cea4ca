#include "tinygpt/tensor/concat.h"

#include <algorithm>

#include "tinygpt/tensor/view.h"

namespace tg::raw {

Tensor cat(const std::vector<Tensor>& tensors, int64_t dim) {
  check(!tensors.empty(), "cat: needs at least one tensor");
  const Tensor& first = tensors.front();
  check(first.dim() >= 1, "cat: cannot join 0-d tensors (shape ", first.shape(), ")");
  dim = normalize_dim(dim, first.dim(), "cat");
  Shape out_shape = first.shape();
  out_shape[dim] = 0;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check(t.dtype() == first.dtype(), "cat: tensor ", i, " has dtype ", dtype_name(t.dtype()), " (shape ", t.shape(),
          ") but tensor 0 has dtype ", dtype_name(first.dtype()), " (shape ", first.shape(), ")");
    bool same_elsewhere = t.dim() == first.dim();
    for (int64_t d = 0; d < first.dim() && same_elsewhere; ++d) same_elsewhere = d == dim || t.size(d) == first.size(d);
    check(same_elsewhere, "cat: tensor ", i, " has shape ", t.shape(), " but tensor 0 has shape ", first.shape(),
          "; they must match in every dim but dim ", dim);
    out_shape[dim] = checked_add(out_shape[dim], t.size(dim), "cat");
  }
  Tensor out = Tensor::empty(out_shape, first.dtype());
  int64_t start = 0;
  for (const Tensor& t : tensors) {
    copy_(narrow(out, dim, start, t.size(dim)), t);
    start += t.size(dim);
  }
  return out;
}

std::vector<Tensor> split(const Tensor& x, const std::vector<int64_t>& sizes, int64_t dim) {
  dim = normalize_dim(dim, x.dim(), "split");
  check(x.dim() >= 1, "split: cannot split a 0-d tensor");
  int64_t total = 0;
  for (int64_t size : sizes) {
    check(size >= 0, "split: negative size ", size, " in sizes ", Shape(sizes));
    total = checked_add(total, size, "split");
  }
  check(total == x.size(dim), "split: sizes ", Shape(sizes), " sum to ", total, ", not to the size ", x.size(dim),
        " of dim ", dim, " (shape ", x.shape(), ")");
  std::vector<Tensor> pieces;
  int64_t start = 0;
  for (int64_t size : sizes) {
    pieces.push_back(narrow(x, dim, start, size));
    start += size;
  }
  return pieces;
}

std::vector<Tensor> split(const Tensor& x, int64_t chunk, int64_t dim) {
  dim = normalize_dim(dim, x.dim(), "split");
  check(x.dim() >= 1, "split: cannot split a 0-d tensor");
  const int64_t size = x.size(dim);
  check(chunk >= 0, "split: chunk size must not be negative, got ", chunk);
  check(chunk > 0 || size == 0, "split: chunk size 0 is only allowed for a dim of size 0, not for dim ", dim,
        " of size ", size, " (shape ", x.shape(), ")");
  // ceil(size / chunk) pieces, but one (empty) piece for a dim of size 0, as in
  // torch. Counted rather than stepped by start += chunk, which a chunk past
  // INT64_MAX / 2 would overflow.
  const int64_t count = size == 0 ? 1 : (size - 1) / chunk + 1;
  std::vector<int64_t> sizes;
  for (int64_t piece = 0; piece < count; ++piece) sizes.push_back(std::min(chunk, size - piece * chunk));
  return split(x, sizes, dim);
}

}  // namespace tg::raw
