// LayerNorm: the module over the fused nn::layer_norm (nn/functional/layer_norm.h).
//
//   x (..., C) -> y (..., C);  weight (C) starts at 1, bias (C) at 0
//
// Without bias (GPTConfig::bias other than all, as nanoGPT allows) the op gets a
// constant zero bias that is not a parameter.
#pragma once
#include "tinygpt/nn/normalization.h"

namespace tg::nn {

class LayerNorm : public Normalization {
 public:
  LayerNorm(int64_t channels, bool bias = true, double eps = 1e-5, DType dtype = DType::Float32);

  Tensor forward(const Tensor& x) const override;

  const Tensor& weight() const { return weight_; }
  const Tensor& bias() const { return bias_; }  // the zero constant without bias
  double eps() const { return eps_; }
  std::string describe() const override;

 private:
  double eps_;
  bool has_bias_;
  Tensor weight_, bias_;
};

}  // namespace tg::nn
