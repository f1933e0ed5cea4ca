#include "nn/parameter_arena.h"

#include "tensor/factory.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

// Makes `target`'s own TensorImpl a contiguous view of `storage` at `offset`:
// every handle sharing that impl now reads the new place.
void repoint(TensorImpl& target, const std::shared_ptr<Storage>& storage, int64_t offset) {
  target.storage = storage;
  target.offset = offset;
  target.strides = contiguous_strides(target.shape);
  target.contiguous = true;
}

}  // namespace

ParameterArena::ParameterArena(Module& module) : named_parameters_(module.named_parameters()) {
  check(!named_parameters_.empty(), "ParameterArena: the module has no parameters");
  const DType dtype = named_parameters_.front().second.dtype();
  int64_t total = 0;
  for (const auto& [name, parameter] : named_parameters_) {
    check(parameter.dtype() == dtype, "ParameterArena: parameter '", name, "' has dtype ", dtype_name(parameter.dtype()),
          ", the first one ", dtype_name(dtype), "; one arena holds one dtype");
    check(parameter.is_leaf(), "ParameterArena: parameter '", name, "' is not a leaf tensor");
    offsets_.push_back(total);
    total += parameter.numel();
  }
  params_ = Tensor::empty({total}, dtype);
  grads_ = zeros({total}, dtype);

  for (size_t i = 0; i < named_parameters_.size(); ++i) {
    const Tensor& parameter = named_parameters_[i].second;
    const int64_t offset = offsets_[i];
    const int64_t count = parameter.numel();
    raw::copy_(raw::view(raw::narrow(params_, 0, offset, count), parameter.shape()), parameter);
    const Tensor old_grad = parameter.grad();
    repoint(parameter.impl(), params_.storage(), offset);
    Tensor grad_view = raw::view(raw::narrow(grads_, 0, offset, count), parameter.shape());
    if (old_grad.defined()) raw::copy_(grad_view, old_grad);
    parameter.impl().grad = grad_view.impl_ptr();
  }
}

void ParameterArena::zero_grad() { fill_(grads_, 0); }

}  // namespace tg::nn
