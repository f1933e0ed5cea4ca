// Tensor: a cheap value handle (a shared pointer) to a view of a Storage.
//
//   element (i0, i1, ..., ik) lives at  storage + offset + sum_d i_d * strides[d]
//
// Copying a Tensor copies the handle, not the data (as in PyTorch). Views
// (reshape, transpose, slice, expand, ...) are new handles over the same storage.
//
// This layer knows nothing of gradients. It only declares the slots autograd/
// fills in (requires_grad, grad, grad_fn), so it never needs to see a Node.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/tensor/dtype.h"
#include "tinygpt/tensor/shape.h"
#include "tinygpt/tensor/storage.h"

namespace tg {

struct Node;  // defined in autograd/node.h

// The record a Tensor handle points at: one view of a Storage. Its fields are
// private: only Tensor reads and writes them, so every way of changing a view
// goes through a member of Tensor that keeps the invariant below.
class TensorImpl {
 private:
  friend class Tensor;

  std::shared_ptr<Storage> storage;
  DType dtype = DType::Float32;
  Shape shape;
  Strides strides;
  int64_t offset = 0;  // in elements
  // Invariant: contiguous == (every dim of size > 1 has stride == product of
  // the sizes after it), as compute_contiguous (tensor.cpp) computes it. Cached because
  // every kernel branches on it; only Tensor's members set it, always from
  // shape and strides.
  bool contiguous = true;
  std::string name;  // optional, shown when printing (a loaded file's tensors carry theirs)

  // Slots filled by autograd/. A leaf that requires grad has no grad_fn.
  bool requires_grad = false;
  std::shared_ptr<TensorImpl> grad;
  std::shared_ptr<Node> grad_fn;
};

class Tensor {
 public:
  Tensor() = default;  // an undefined tensor (no data); defined() is false

  // A fresh contiguous tensor with uninitialised data.
  static Tensor empty(const Shape& shape, DType dtype = DType::Float32);
  // A fresh contiguous tensor of zeros (tg::zeros): a large one's pages cost no memory until written
  // (Storage::allocate_zeroed).
  static Tensor zeroed(const Shape& shape, DType dtype = DType::Float32);
  // A view of `storage` (no copy). Checks that every element lies inside it.
  static Tensor view_of(std::shared_ptr<Storage> storage, DType dtype, Shape shape, Strides strides,
                        int64_t offset);

  bool defined() const { return impl_ != nullptr; }
  DType dtype() const { return impl().dtype; }
  const Shape& shape() const { return impl().shape; }
  const Strides& strides() const { return impl().strides; }
  int64_t offset() const { return impl().offset; }
  int64_t dim() const { return static_cast<int64_t>(impl().shape.size()); }
  int64_t size(int64_t dim) const;    // negative dims count from the end
  int64_t stride(int64_t dim) const;  // negative dims count from the end
  int64_t numel() const { return tg::numel(impl().shape); }
  bool is_contiguous() const { return impl().contiguous; }
  const std::shared_ptr<Storage>& storage() const { return impl().storage; }

  // Pointer to element (0, ..., 0). Throws if T is not the tensor's dtype.
  template <class T> T* data() const;
  // The value of a one-element tensor, converted to T.
  template <class T> T item() const;
  // All elements in row-major order, converted to T (for tests and printing).
  template <class T> std::vector<T> to_vector() const;

  const std::string& name() const { return impl().name; }
  Tensor& set_name(std::string name);

  // Autograd slots (the logic lives in autograd/).
  bool requires_grad() const { return impl().requires_grad; }
  Tensor& set_requires_grad(bool enabled = true);  // leaves of floating dtype only
  Tensor grad() const { return Tensor(impl().grad); }  // undefined until a backward reaches it
  // Replaces .grad (an undefined tensor clears it). Checks shape and dtype.
  void set_grad(const Tensor& grad);
  const std::shared_ptr<Node>& grad_fn() const { return impl().grad_fn; }
  bool is_leaf() const { return impl().grad_fn == nullptr; }

  // Same data, same view, but cut from the graph: no grad, no grad_fn.
  Tensor detach() const;

  bool is_same(const Tensor& other) const { return impl_ == other.impl_; }

  // ---------------------------------------------------------------------------
  // Engine internals. The members below are for the layers that build the
  // engine itself (autograd/'s tape, nn::ParameterArena), not for ops or
  // models: they act on the record every handle to this tensor shares, and
  // each says which invariant it keeps. (mlx fences its backend-only methods
  // the same way.)

  // The shared record, as an opaque identity (the tape's edge to a leaf, the
  // module registry's duplicate check) and back.
  const std::shared_ptr<TensorImpl>& impl_ptr() const { return impl_; }
  explicit Tensor(std::shared_ptr<TensorImpl> impl) : impl_(std::move(impl)) {}

  // Makes this tensor an output of the tape: requires_grad and its node.
  // autograd's record() alone calls it, on a fresh output.
  void attach_grad_fn(std::shared_ptr<Node> node);

  // Moves this tensor, for every handle that shares it, onto the contiguous
  // stretch of `buffer` (a contiguous 1-D tensor of the same dtype) that starts
  // at element `start`: storage, offset and strides change, the shape stays, and
  // the contiguity flag is recomputed (true). The values are not copied: the
  // caller copies them first. Leaves only (a computed tensor's node saved the
  // old place). ParameterArena uses it to gather the parameters into one buffer.
  void rebind_to(const Tensor& buffer, int64_t start);

 private:
  // A contiguous tensor over all of `storage` (no copy, no check: for empty and zeroed).
  static Tensor contiguous_in(std::shared_ptr<Storage> storage, const Shape& shape, DType dtype);
  TensorImpl& impl() const;
  std::shared_ptr<TensorImpl> impl_;
};

template <class T>
T* Tensor::data() const {
  check(dtype_of<T>() == dtype(), "data<", dtype_name(dtype_of<T>()), ">: tensor has dtype ", dtype_name(dtype()));
  return static_cast<T*>(impl().storage->data()) + impl().offset;
}

}  // namespace tg
