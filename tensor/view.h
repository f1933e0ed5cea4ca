// Views: new handles over the same storage, with other shape/strides/offset.
// They copy no data; reshape() and contiguous() copy when they must, and
// clone(), copy_() and to_dtype() are the copies (each says so below).
//
// Namespace raw: these work on data only and record nothing for autograd. The
// differentiable versions users call (tg::reshape, tg::transpose, ...) live in
// autograd/ and call these.
#pragma once
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

// A view with a new shape over the same elements; one size may be -1 (inferred).
// Throws when the strides cannot express the new shape without a copy
// (e.g. viewing a transposed matrix as a flat vector): use reshape() then.
Tensor view(const Tensor& x, Shape shape);
// As view() when possible; otherwise copies into a contiguous tensor first.
Tensor reshape(const Tensor& x, Shape shape);
// Swaps two dims (no copy: swaps their sizes and strides).
Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1);
// Reorders dims: result dim i is input dim dims[i].
Tensor permute(const Tensor& x, const std::vector<int64_t>& dims);
// Elements start, start+step, ... < end along `dim` (negative start/end count from the end).
Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
// `length` elements from `start` along `dim`.
Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length);
// Removes `dim`, keeping index `index` of it.
Tensor select(const Tensor& x, int64_t dim, int64_t index);
// Removes `dim`, which must have size 1.
Tensor squeeze(const Tensor& x, int64_t dim);
// Inserts a size-1 dim at position `dim` (0..ndim).
Tensor unsqueeze(const Tensor& x, int64_t dim);
// Broadcasts to `shape` (size-1 dims repeat with stride 0; new leading dims allowed).
// A size of -1 keeps the input's size.
Tensor expand(const Tensor& x, const Shape& shape);

// x itself when already contiguous, else a contiguous copy.
Tensor contiguous(const Tensor& x);
// A contiguous copy, always.
Tensor clone(const Tensor& x);
// Copies src into dst elementwise (src broadcast to dst's shape; dtypes may differ).
void copy_(const Tensor& dst, const Tensor& src);

// What every in-place op does before it writes into `dst`:
// - throws naming `op` when `dst` is a view in which one memory location stands for several
//   elements (an expanded view: stride 0 along a dim of size > 1). An in-place write into it would
//   land each of those elements' updates in one place (add_ into an expanded view of 20,000 elements
//   added 20,000 times into one float); PyTorch refuses such writes too;
// - bumps the version of dst's storage, so that a backward that saved it finds out (autograd/node.h).
// These raw writes are never recorded on the tape: they are what an in-place op under
// torch.no_grad() is, which is why a leaf that requires grad may take one (initialisation, loading).
void begin_in_place_write(const Tensor& dst, const char* op);
// x converted to another dtype (x itself if it already has it).
Tensor to_dtype(const Tensor& x, DType dtype);

}  // namespace tg::raw
