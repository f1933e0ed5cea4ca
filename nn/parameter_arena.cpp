#include "tinygpt/nn/parameter_arena.h"

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

ParameterArena::ParameterArena(Module& module)
    : named_parameters_(module.named_parameters()), layout_(named_parameters_) {
  for (const auto& [name, parameter] : named_parameters_)
    check(parameter.is_leaf(), "ParameterArena: parameter '", name, "' is not a leaf tensor");
  params_ = Tensor::empty({layout_.total()}, layout_.dtype());
  grads_ = layout_.zeros();
  for (size_t i = 0; i < named_parameters_.size(); ++i) {
    Tensor parameter = named_parameters_[i].second;
    raw::copy_(layout_.view(params_, i), parameter);
    parameter.rebind_to(params_, layout_.slots()[i].offset);
    const Tensor grad = layout_.view(grads_, i);
    if (parameter.grad().defined()) raw::copy_(grad, parameter.grad());
    parameter.set_grad(grad);
  }
}

std::vector<int64_t> ParameterArena::offsets() const {
  std::vector<int64_t> offsets;
  for (const ParameterLayout::Slot& slot : layout_.slots()) offsets.push_back(slot.offset);
  return offsets;
}

void ParameterArena::zero_grad() {
  ProfilePassScope pass(ProfilePass::update);
  fill_(grads_, 0);
}

}  // namespace tg::nn
