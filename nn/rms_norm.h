// RMSNorm: the module over the fused nn::rms_norm (nn/functional/rms_norm.h).
//
//   x (..., C) -> y (..., C);  weight (C) starts at 1, or no parameter at all (nanochat)
#pragma once
#include "tinygpt/nn/normalization.h"

namespace tg::nn {

class RMSNorm : public Normalization {
 public:
  RMSNorm(int64_t channels, bool weight = true, double eps = 1e-6, DType dtype = DType::Float32);

  Tensor forward(const Tensor& x) const override;

  const Tensor& weight() const { return weight_; }  // undefined without weight
  double eps() const { return eps_; }
  std::string describe() const override;

 private:
  int64_t channels_;
  double eps_;
  Tensor weight_;
};

}  // namespace tg::nn
