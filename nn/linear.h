// Linear: y = x @ W^T + b, as torch.nn.Linear.
//
//   x (..., in) -> y (..., out);  weight (out, in), bias (out)
//
// The weight is stored (out, in) like PyTorch, so checkpoints map one to one;
// x @ W^T passes a transposed view to matmul, which BLAS takes as a flag. Any
// leading dims are folded into the rows first (a view, no copy), so (B, T, C)
// input is ONE (B*T, in) @ (in, out) gemm, not B small ones.
//
// Parameters start at zero: initialise them with nn/init.h (the GPT does, by
// parameter role, in one pass).
#pragma once
#include "nn/module.h"

namespace tg::nn {

// The function the module applies, for callers holding the tensors themselves
// (the walk-through reads parameters by name). bias may be undefined.
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias);

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::Float32);

  Tensor forward(const Tensor& x) const;

  const Tensor& weight() const { return weight_; }  // (out, in)
  const Tensor& bias() const { return bias_; }      // (out), undefined without bias
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  std::string describe() const override;

 private:
  int64_t in_features_, out_features_;
  Tensor weight_, bias_;
};

}  // namespace tg::nn
