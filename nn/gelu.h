// GELU: the module over the fused nn::gelu (nn/functional/gelu.h), tanh
// approximation (GPT-2) or exact erf. Elementwise, any shape. No parameters.
#pragma once
#include "tinygpt/nn/functional/gelu.h"
#include "tinygpt/nn/module.h"

namespace tg::nn {

class GELU : public Module {
 public:
  explicit GELU(GeluApproximation approximation = GeluApproximation::Tanh) : approximation_(approximation) {}

  Tensor forward(const Tensor& x) const { return gelu(x, approximation_); }

  GeluApproximation approximation() const { return approximation_; }
  std::string describe() const override {
    return approximation_ == GeluApproximation::Tanh ? "GELU(tanh)" : "GELU(erf)";
  }

 private:
  GeluApproximation approximation_;
};

}  // namespace tg::nn
