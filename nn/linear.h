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
//
// The weight can be kept in bfloat16 or int8 blocks (quantize(), nn/quantize.h,
// tensor/quantized_matrix.h), frozen: for inference, and as QLoRA's base under
// LoRA adapters, where the backward passes the input's gradient only.
//
// With a LoRA adapter attached (attach_lora, nn/lora.h) the weight and bias are
// frozen and forward adds the adapter's low-rank update.
//
// The module that owns a Linear names what it is for (set_profile_role("mlp.c_fc")):
// the profile's GEMM rows of its forward and backward products (tensor/runtime/profile.h).
#pragma once
#include <memory>

#include "tinygpt/nn/lora.h"
#include "tinygpt/nn/module.h"
#include "tinygpt/tensor/quantized_matrix.h"

namespace tg::nn {

// The function the module applies, for callers holding the tensors themselves
// (the walk-through reads parameters by name). bias may be undefined;
// profile_role as in tg::matmul (autograd/matmul_op.h).
// matmul_dtype: float32, or bfloat16 for mixed-precision training (autograd/linear_op.h).
Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* profile_role = nullptr,
              DType matmul_dtype = DType::Float32);
// The same with a reduced-precision weight (out, in), which is frozen: x gets a
// gradient (through the float32-widened weight), the weight and bias none.
Tensor linear(const Tensor& x, const QuantizedMatrix& weight, const Tensor& bias);

class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true, DType dtype = DType::Float32);

  Tensor forward(const Tensor& x) const;

  const Tensor& weight() const { return weight_; }  // (out, in): float32/64, or bfloat16/int8 values once quantized
  // Keeps the weight in `format` (bfloat16 or int8) from now on.
  void quantize(DType format, QuantizedValues values = QuantizedValues::FromWeights);
  bool is_quantized() const { return is_quantized_format(weight_.dtype()); }
  QuantizedMatrix quantized_weight() const { return {weight_, weight_scale_}; }  // when is_quantized()
  const Tensor& bias() const { return bias_; }      // (out), undefined without bias
  int64_t in_features() const { return in_features_; }
  int64_t out_features() const { return out_features_; }
  std::string describe() const override;
  // role: a string literal ("attn.qkv"), or nullptr for the "unlabelled" GEMM rows.
  void set_profile_role(const char* role) { profile_role_ = role; }
  // Float32 (the default) or BFloat16: mixed-precision products (autograd/linear_op.h)
  // for a float32 weight.
  void set_matmul_dtype(DType dtype);
  DType matmul_dtype() const { return matmul_dtype_; }
  // Freezes the weight and bias (no gradient from now on) and adds the adapter's
  // update to every forward; registered as the child "lora". Its rows must be out_features.
  void attach_lora(std::shared_ptr<LoraAdapter> adapter);
  const LoraAdapter* lora() const { return lora_.get(); }  // null without an adapter
  // Folds the adapter into the weight, W[rows of block j] += (alpha / r) B_j A_j, and
  // removes it: forward then computes the adapted layer with one product. The
  // weight stays frozen. A float32 or float64 weight only.
  void merge_lora();

 private:
  int64_t in_features_, out_features_;
  Tensor weight_, bias_;
  Tensor weight_scale_;  // (out, ceil(in / 32)) for an int8 weight
  const char* profile_role_ = nullptr;
  DType matmul_dtype_ = DType::Float32;
  std::shared_ptr<LoraAdapter> lora_;
};

}  // namespace tg::nn
