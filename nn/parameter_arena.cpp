#include "tinygpt/nn/parameter_arena.h"

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

std::vector<std::pair<std::string, Tensor>> trainable_parameters(const Module& module) {
  std::vector<std::pair<std::string, Tensor>> trainable;
  for (auto& named : module.named_parameters())
    if (named.second.requires_grad()) trainable.push_back(std::move(named));
  check(!trainable.empty(), "ParameterArena: the module has no parameter that requires a gradient");
  return trainable;
}

}  // namespace

ParameterArena::ParameterArena(Module& module)
    : named_parameters_(trainable_parameters(module)), layout_(named_parameters_) {
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
