#include "tinygpt/nn/rms_norm.h"

#include <sstream>

#include "tinygpt/nn/functional/rms_norm.h"
#include "tinygpt/tensor/factory.h"

namespace tg::nn {

RMSNorm::RMSNorm(int64_t channels, bool weight, double eps, DType dtype) : channels_(channels), eps_(eps) {
  check(channels > 0, "RMSNorm: channels must be positive, got ", channels);
  check(eps > 0, "RMSNorm: eps must be positive, got ", eps);
  if (weight) weight_ = register_parameter("weight", ones({channels}, dtype));
}

Tensor RMSNorm::forward(const Tensor& x) const { return rms_norm(x, weight_, eps_); }

std::string RMSNorm::describe() const {
  std::ostringstream text;
  text << "RMSNorm(" << channels_ << ", eps=" << eps_ << (weight_.defined() ? ")" : ", no weight)");
  return text.str();
}

}  // namespace tg::nn
