#include "tinygpt/tensor/tensor.h"

#include <limits>

namespace tg {

namespace {

// The cached contiguity flag of a view with these shape and strides.
bool compute_contiguous(const Shape& shape, const Strides& strides) {
  int64_t expected = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] == 1) continue;  // a size-1 dim never moves, whatever its stride
    if (strides[d] != expected) return false;
    expected *= shape[d];
  }
  return true;
}

}  // namespace

namespace {

// The bytes of a contiguous `shape` of `dtype`, checked: no negative size, and
// within INT64_MAX as torch bounds them.
size_t checked_bytes(const Shape& shape, DType dtype, const char* op) {
  for (int64_t size : shape) check(size >= 0, op, ": negative size in shape ", shape);
  const int64_t count = tg::numel(shape, op);
  check(count <= std::numeric_limits<int64_t>::max() / static_cast<int64_t>(dtype_size(dtype)), op, ": shape ", shape,
        " of ", dtype_name(dtype), " needs more than INT64_MAX bytes");
  return static_cast<size_t>(count) * dtype_size(dtype);
}

}  // namespace

Tensor Tensor::contiguous_in(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype) {
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->dtype = dtype;
  impl->shape = shape;
  impl->strides = contiguous_strides(shape);
  impl->contiguous = true;
  return Tensor(std::move(impl));
}

Tensor Tensor::empty(const Shape& shape, DType dtype) {
  return contiguous_in(Storage::allocate(checked_bytes(shape, dtype, "empty")), shape, dtype);
}

Tensor Tensor::zeroed(const Shape& shape, DType dtype) {
  // Zero bits are zero in every dtype (0.0f, 0, false, bfloat16 0).
  return contiguous_in(Storage::allocate_zeroed(checked_bytes(shape, dtype, "zeros")), shape, dtype);
}

Tensor Tensor::view_of(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides, int64_t offset) {
  check(shape.size() == strides.size(), "view: shape ", shape, " and strides ", strides, " differ in length");
  for (int64_t size : shape) check(size >= 0, "view: negative size in shape ", shape);
  if (tg::numel(shape, "view") > 0) {  // an empty view touches no element, so any strides and offset do
    // The extent of the view: the lowest and highest element it can touch.
    int64_t lowest = offset, highest = offset;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t reach = checked_mul(shape[d] - 1, strides[d], "view");
      int64_t& bound = reach < 0 ? lowest : highest;
      bound = checked_add(bound, reach, "view");
    }
    const int64_t capacity = static_cast<int64_t>(storage->bytes() / dtype_size(dtype));
    check(lowest >= 0 && highest < capacity, "view: shape ", shape, " with strides ", strides, " at offset ", offset,
          " reaches outside a storage of ", capacity, " elements");
  }
  auto impl = std::make_shared<TensorImpl>();
  impl->storage = std::move(storage);
  impl->dtype = dtype;
  impl->contiguous = compute_contiguous(shape, strides);
  impl->shape = std::move(shape);
  impl->strides = std::move(strides);
  impl->offset = offset;
  return Tensor(std::move(impl));
}

TensorImpl& Tensor::impl() const {
  check(impl_ != nullptr, "tensor is undefined (default-constructed, or a gradient that was never computed)");
  return *impl_;
}

// normalize_dim takes dim 0 (and -1) of a 0-d tensor, as reductions over it do; a 0-d tensor
// has no size or stride to read there (PyTorch refuses it too).
int64_t Tensor::size(int64_t d) const {
  check(dim() > 0, "size: dim ", d, " of a 0-d tensor, which has no dims");
  return impl().shape[normalize_dim(d, dim(), "size")];
}
int64_t Tensor::stride(int64_t d) const {
  check(dim() > 0, "stride: dim ", d, " of a 0-d tensor, which has no dims");
  return impl().strides[normalize_dim(d, dim(), "stride")];
}

Tensor& Tensor::set_name(std::string name) {
  impl().name = std::move(name);
  return *this;
}

Tensor& Tensor::set_requires_grad(bool enabled) {
  check(!enabled || is_floating(dtype()), "set_requires_grad: only floating-point tensors can require grad, got ",
        dtype_name(dtype()));
  check(is_leaf(), "set_requires_grad: only leaves can be changed; this tensor was computed by an op (detach() it)");
  impl().requires_grad = enabled;
  return *this;
}

void Tensor::set_grad(const Tensor& grad) {
  if (grad.defined()) {
    check(grad.shape() == shape(), "set_grad: gradient of shape ", grad.shape(), " for a tensor of shape ", shape());
    check(grad.dtype() == dtype(), "set_grad: gradient dtype ", dtype_name(grad.dtype()), " for a tensor of dtype ",
          dtype_name(dtype()));
  }
  impl().grad = grad.impl_ptr();
}

void Tensor::attach_grad_fn(std::shared_ptr<Node> node) {
  check(is_leaf() && !requires_grad(), "attach_grad_fn: the tensor already belongs to a graph");
  impl().requires_grad = true;
  impl().grad_fn = std::move(node);
}

void Tensor::rebind_to(const Tensor& buffer, int64_t start) {
  check(is_leaf(), "rebind_to: only a leaf can move (this tensor was computed by an op)");
  check(buffer.dim() == 1 && buffer.is_contiguous() && buffer.dtype() == dtype(), "rebind_to: the buffer must be a "
        "contiguous 1-D ", dtype_name(dtype()), " tensor, got ", dtype_name(buffer.dtype()), " of shape ", buffer.shape(),
        " with strides ", buffer.strides());
  check(start >= 0 && start <= buffer.numel() && numel() <= buffer.numel() - start, "rebind_to: ", numel(),
        " elements from element ", start, " do not fit a buffer of ", buffer.numel());
  TensorImpl& record = impl();
  record.storage = buffer.storage();
  record.offset = buffer.offset() + start;
  record.strides = contiguous_strides(record.shape);
  record.contiguous = compute_contiguous(record.shape, record.strides);
}

Tensor Tensor::detach() const {
  auto copy = std::make_shared<TensorImpl>();
  copy->storage = impl().storage;
  copy->dtype = impl().dtype;
  copy->shape = impl().shape;
  copy->strides = impl().strides;
  copy->offset = impl().offset;
  copy->contiguous = impl().contiguous;
  copy->name = impl().name;
  return Tensor(std::move(copy));
}

template <class T>
T Tensor::item() const {
  check(numel() == 1, "item: tensor of shape ", shape(), " has ", numel(), " elements, not 1");
  return visit_any(dtype(), [&]<class S>() { return static_cast<T>(*data<S>()); });
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  std::vector<T> values;
  values.reserve(static_cast<size_t>(numel()));
  visit_any(dtype(), [&]<class S>() {
    const S* base = data<S>();
    const Shape& sizes = shape();
    const Strides& steps = strides();
    std::vector<int64_t> index(sizes.size(), 0);
    for (int64_t n = 0, count = numel(); n < count; ++n) {
      int64_t position = 0;
      for (size_t d = 0; d < sizes.size(); ++d) position += index[d] * steps[d];
      values.push_back(static_cast<T>(base[position]));
      for (size_t d = sizes.size(); d-- > 0;) {  // odometer increment
        if (++index[d] < sizes[d]) break;
        index[d] = 0;
      }
    }
  });
  return values;
}

template float Tensor::item<float>() const;
template double Tensor::item<double>() const;
template int64_t Tensor::item<int64_t>() const;
template bool Tensor::item<bool>() const;
template std::vector<float> Tensor::to_vector<float>() const;
template std::vector<double> Tensor::to_vector<double>() const;
template std::vector<int64_t> Tensor::to_vector<int64_t>() const;
template std::vector<int8_t> Tensor::to_vector<int8_t>() const;
template std::vector<bool> Tensor::to_vector<bool>() const;

}  // namespace tg
