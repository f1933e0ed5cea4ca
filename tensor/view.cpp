#include "tinygpt/tensor/view.h"

#include <algorithm>

#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/strided_loop.h"

namespace tg::raw {

namespace {

Tensor restride(const Tensor& x, Shape shape, Strides strides, int64_t offset) {
  return Tensor::view_of(x.storage(), x.dtype(), std::move(shape), std::move(strides), offset);
}

// Fills new_strides with strides that let `new_shape` walk the same elements as
// x in row-major order and returns true, or returns false when no strides can.
// The idea, as in PyTorch's computeStride: split x's dims into chunks that are
// contiguous among themselves; each chunk of old dims must map onto a run of new dims.
bool strides_for_view(const Tensor& x, const Shape& new_shape, Strides& new_strides) {
  const Shape& old_shape = x.shape();
  const Strides& old_strides = x.strides();
  new_strides.assign(new_shape.size(), 0);
  if (x.numel() == 0 || x.dim() == 0) {  // nothing to walk, or a single element: any strides do
    new_strides = contiguous_strides(new_shape);
    return true;
  }
  int64_t view_d = static_cast<int64_t>(new_shape.size()) - 1;
  int64_t chunk_base_stride = old_strides.empty() ? 1 : old_strides.back();
  int64_t tensor_numel = 1, view_numel = 1;
  for (int64_t d = static_cast<int64_t>(old_shape.size()) - 1; d >= 0; --d) {
    tensor_numel *= old_shape[d];
    // A chunk ends where dim d-1 is not laid out right after dim d.
    if (d == 0 || (old_shape[d - 1] != 1 && old_strides[d - 1] != tensor_numel * chunk_base_stride)) {
      while (view_d >= 0 && (view_numel < tensor_numel || new_shape[view_d] == 1)) {
        new_strides[view_d] = view_numel * chunk_base_stride;
        view_numel *= new_shape[view_d];
        --view_d;
      }
      if (view_numel != tensor_numel) return false;
      if (d > 0) {
        chunk_base_stride = old_strides[d - 1];
        tensor_numel = 1;
        view_numel = 1;
      }
    }
  }
  return view_d == -1;
}

// The shape `shape` with a -1 entry resolved for `count` elements (for view/reshape).
Shape infer_shape(Shape shape, int64_t count, const char* op) {
  int64_t inferred = -1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == -1) {
      check(inferred < 0, op, ": only one size may be -1, got ", shape);
      inferred = static_cast<int64_t>(d);
    } else {
      check(shape[d] >= 0, op, ": invalid size ", shape[d], " in shape ", shape);
    }
  }
  if (inferred >= 0) {
    int64_t known = 1;  // the product of the other sizes
    for (size_t d = 0; d < shape.size(); ++d)
      if (static_cast<int64_t>(d) != inferred) known = checked_mul(known, shape[d], op);
    check(known != 0 && count % known == 0, op, ": shape ", shape, " is invalid for ", count, " elements");
    shape[inferred] = count / known;
  }
  check(numel(shape, op) == count, op, ": shape ", shape, " is invalid for input of ", count, " elements");
  return shape;
}

}  // namespace

Tensor view(const Tensor& x, Shape shape) {
  shape = infer_shape(std::move(shape), x.numel(), "view");
  Strides strides;
  check(strides_for_view(x, shape, strides), "view: a tensor of shape ", x.shape(), " and strides ", x.strides(),
        " cannot be viewed as shape ", shape, " without a copy (use reshape)");
  return restride(x, std::move(shape), std::move(strides), x.offset());
}

Tensor reshape(const Tensor& x, Shape shape) {
  shape = infer_shape(std::move(shape), x.numel(), "reshape");
  Strides strides;
  if (strides_for_view(x, shape, strides)) return restride(x, std::move(shape), std::move(strides), x.offset());
  return view(clone(x), std::move(shape));
}

Tensor transpose(const Tensor& x, int64_t dim0, int64_t dim1) {
  dim0 = normalize_dim(dim0, x.dim(), "transpose");
  dim1 = normalize_dim(dim1, x.dim(), "transpose");
  Shape shape = x.shape();
  Strides strides = x.strides();
  if (x.dim() > 0) {
    std::swap(shape[dim0], shape[dim1]);
    std::swap(strides[dim0], strides[dim1]);
  }
  return restride(x, std::move(shape), std::move(strides), x.offset());
}

Tensor permute(const Tensor& x, const std::vector<int64_t>& dims) {
  check(static_cast<int64_t>(dims.size()) == x.dim(), "permute: ", dims.size(), " dims given for a tensor of shape ",
        x.shape());
  Shape shape(dims.size());
  Strides strides(dims.size());
  std::vector<bool> seen(dims.size(), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t d = normalize_dim(dims[i], x.dim(), "permute");
    check(!seen[d], "permute: dim ", d, " appears twice in ", Shape(dims));
    seen[d] = true;
    shape[i] = x.shape()[d];
    strides[i] = x.strides()[d];
  }
  return restride(x, std::move(shape), std::move(strides), x.offset());
}

Tensor slice(const Tensor& x, int64_t dim, int64_t start, int64_t end, int64_t step) {
  dim = normalize_dim(dim, x.dim(), "slice");
  check(x.dim() > 0, "slice: cannot slice a 0-d tensor");
  check(step > 0, "slice: step must be positive, got ", step);
  const int64_t size = x.shape()[dim];
  if (start < 0) start += size;
  if (end < 0) end += size;
  start = std::clamp<int64_t>(start, 0, size);
  end = std::clamp<int64_t>(end, start, size);
  Shape shape = x.shape();
  Strides strides = x.strides();
  // ceil((end - start) / step), without the sum end - start + step - 1 that a
  // huge step would overflow.
  shape[dim] = end > start ? (end - start - 1) / step + 1 : 0;
  if (__builtin_mul_overflow(x.strides()[dim], step, &strides[dim])) {
    // Only a dim left with at most one element can get here from a non-empty
    // tensor (stride * (size - 1) fits in its storage). Such a dim never moves,
    // so its stride is free: keep x's.
    check(shape[dim] <= 1, "slice: stride ", x.strides()[dim], " * step ", step, " overflows int64 (dim ", dim,
          " of shape ", x.shape(), ")");
    strides[dim] = x.strides()[dim];
  }
  const int64_t offset = checked_add(x.offset(), checked_mul(start, x.strides()[dim], "slice"), "slice");
  return restride(x, std::move(shape), std::move(strides), offset);
}

Tensor narrow(const Tensor& x, int64_t dim, int64_t start, int64_t length) {
  dim = normalize_dim(dim, x.dim(), "narrow");
  const int64_t size = x.dim() > 0 ? x.shape()[dim] : 0;
  // length <= size - start rather than start + length <= size, which could overflow.
  check(start >= 0 && length >= 0 && start <= size && length <= size - start, "narrow: start ", start, " + length ",
        length, " is out of range for dim ", dim, " of size ", size, " (shape ", x.shape(), ")");
  return slice(x, dim, start, start + length);
}

Tensor select(const Tensor& x, int64_t dim, int64_t index) {
  dim = normalize_dim(dim, x.dim(), "select");
  check(x.dim() > 0, "select: cannot select from a 0-d tensor");
  const int64_t size = x.shape()[dim];
  check(index >= -size && index < size, "select: index ", index, " is out of range for dim ", dim, " of size ", size,
        " (shape ", x.shape(), ")");
  if (index < 0) index += size;
  Shape shape = x.shape();
  Strides strides = x.strides();
  const int64_t offset = checked_add(x.offset(), checked_mul(index, strides[dim], "select"), "select");
  shape.erase(shape.begin() + dim);
  strides.erase(strides.begin() + dim);
  return restride(x, std::move(shape), std::move(strides), offset);
}

Tensor squeeze(const Tensor& x, int64_t dim) {
  dim = normalize_dim(dim, x.dim(), "squeeze");
  if (x.dim() == 0) return x.detach();
  check(x.shape()[dim] == 1, "squeeze: dim ", dim, " has size ", x.shape()[dim], ", not 1 (shape ", x.shape(), ")");
  return select(x, dim, 0);
}

Tensor unsqueeze(const Tensor& x, int64_t dim) {
  dim = normalize_dim(dim, x.dim() + 1, "unsqueeze");
  Shape shape = x.shape();
  Strides strides = x.strides();
  const int64_t stride = dim < x.dim() ? checked_mul(strides[dim], shape[dim], "unsqueeze") : 1;
  shape.insert(shape.begin() + dim, 1);
  strides.insert(strides.begin() + dim, stride);
  return restride(x, std::move(shape), std::move(strides), x.offset());
}

Tensor expand(const Tensor& x, const Shape& shape) {
  check(shape.size() >= x.shape().size(), "expand: cannot expand shape ", x.shape(), " to fewer dims ", shape);
  const size_t leading = shape.size() - x.shape().size();
  Shape out_shape(shape.size());
  Strides out_strides(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    if (d < leading) {
      check(shape[d] >= 0, "expand: size -1 is not allowed for a new leading dim (", shape, ")");
      out_shape[d] = shape[d];
      out_strides[d] = 0;
      continue;
    }
    const int64_t size = x.shape()[d - leading];
    const int64_t wanted = shape[d] == -1 ? size : shape[d];
    check(size == wanted || size == 1, "expand: shape ", x.shape(), " cannot be expanded to ", shape, " (dim ", d,
          ": ", size, " vs ", wanted, ")");
    out_shape[d] = wanted;
    out_strides[d] = size == wanted ? x.strides()[d - leading] : 0;
  }
  numel(out_shape, "expand");  // throws when the expanded element count does not fit in int64
  return restride(x, std::move(out_shape), std::move(out_strides), x.offset());
}

void begin_in_place_write(const Tensor& dst, const char* op) {
  if (dst.numel() == 0) return;  // no element, no write (an empty tensor's strides may well be 0)
  for (int64_t d = 0; d < dst.dim(); ++d)
    check(dst.stride(d) != 0 || dst.size(d) <= 1, op, ": the destination of shape ", dst.shape(), " is an expanded "
          "view (stride 0 along dim ", d, "), where one memory location stands for ", dst.size(d), " elements; "
          "write into a contiguous copy instead");
  dst.storage()->bump_version();
}

void copy_(const Tensor& dst, const Tensor& src) {
  check(broadcast_shapes(dst.shape(), src.shape(), "copy_") == dst.shape(), "copy_: a source of shape ", src.shape(),
        " does not broadcast to the destination's shape ", dst.shape());
  begin_in_place_write(dst, "copy_");
  ProfileScope scope(ProfileFamily::copy);
  scope.add_bytes_of(dst, src);
  const Tensor source = expand(src, dst.shape());
  visit_any(dst.dtype(), [&]<class Out>() {
    visit_any(src.dtype(), [&]<class In>() {
      Out* out = dst.data<Out>();
      const In* in = source.data<In>();
      StridedLoop<2>(dst.shape(), {dst.strides(), source.strides()}).run([&](auto offsets, int64_t count, auto steps) {
        Out* out_run = out + offsets[0];
        const In* in_run = in + offsets[1];
        if (steps[0] == 1 && steps[1] == 1) {
          for (int64_t i = 0; i < count; ++i) out_run[i] = static_cast<Out>(in_run[i]);
        } else {
          for (int64_t i = 0; i < count; ++i) out_run[i * steps[0]] = static_cast<Out>(in_run[i * steps[1]]);
        }
      });
    });
  });
}

Tensor clone(const Tensor& x) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  copy_(out, x);
  return out;
}

Tensor contiguous(const Tensor& x) { return x.is_contiguous() ? x : clone(x); }

Tensor to_dtype(const Tensor& x, DType dtype) {
  if (x.dtype() == dtype) return x;
  Tensor out = Tensor::empty(x.shape(), dtype);
  copy_(out, x);
  return out;
}

}  // namespace tg::raw
