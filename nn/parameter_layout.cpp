#include "tinygpt/nn/parameter_layout.h"

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

ParameterLayout::ParameterLayout(const std::vector<std::pair<std::string, Tensor>>& named_parameters) {
  check(!named_parameters.empty(), "ParameterLayout: no parameters");
  dtype_ = named_parameters.front().second.dtype();
  for (const auto& [name, parameter] : named_parameters) {
    check(parameter.dtype() == dtype_, "ParameterLayout: parameter '", name, "' has dtype ",
          dtype_name(parameter.dtype()), ", the first one ", dtype_name(dtype_), "; one arena holds one dtype");
    slots_.push_back(Slot{name, parameter.shape(), total_, parameter.numel()});
    total_ += parameter.numel();
  }
}

Tensor ParameterLayout::zeros() const { return tg::zeros({total_}, dtype_); }

Tensor ParameterLayout::view(const Tensor& buffer, size_t slot) const {
  check(slot < slots_.size(), "ParameterLayout::view: slot ", slot, " of ", slots_.size());
  check(buffer.shape() == Shape{total_}, "ParameterLayout::view: the buffer has shape ", buffer.shape(),
        ", the layout's is ", Shape{total_});
  const Slot& entry = slots_[slot];
  return raw::view(raw::narrow(buffer, 0, entry.offset, entry.count), entry.shape);
}

}  // namespace tg::nn
