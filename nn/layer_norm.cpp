#include "tinygpt/nn/layer_norm.h"

#include <sstream>

#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/tensor/factory.h"

namespace tg::nn {

LayerNorm::LayerNorm(int64_t channels, bool bias, double eps, DType dtype) : eps_(eps), has_bias_(bias) {
  check(channels > 0, "LayerNorm: channels must be positive, got ", channels);
  check(eps > 0, "LayerNorm: eps must be positive, got ", eps);
  weight_ = register_parameter("weight", ones({channels}, dtype));
  bias_ = bias ? register_parameter("bias", zeros({channels}, dtype)) : zeros({channels}, dtype);
}

Tensor LayerNorm::forward(const Tensor& x) const { return layer_norm(x, weight_, bias_, eps_); }

std::string LayerNorm::describe() const {
  std::ostringstream text;
  text << "LayerNorm(" << weight_.size(0) << ", eps=" << eps_ << (has_bias_ ? ")" : ", no bias)");
  return text.str();
}

}  // namespace tg::nn
