#include "tinygpt/nn/linear.h"

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/quantized_matmul.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

Linear::Linear(int64_t in_features, int64_t out_features, bool bias, DType dtype)
    : in_features_(in_features), out_features_(out_features) {
  check(in_features > 0 && out_features > 0, "Linear: sizes must be positive, got in=", in_features, " out=",
        out_features);
  weight_ = register_parameter("weight", zeros({out_features, in_features}, dtype));
  if (bias) bias_ = register_parameter("bias", zeros({out_features}, dtype));
}

Tensor linear(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* profile_role, DType matmul_dtype) {
  const int64_t in_features = weight.size(1);
  check(x.dim() >= 1 && x.size(-1) == in_features, "Linear: input of shape ", x.shape(), " needs a last dim of ",
        in_features);
  Shape out_shape = x.shape();
  out_shape.back() = weight.size(0);
  const Tensor rows = x.dim() == 2 ? x : reshape(x, {-1, in_features});  // (N, in), a view when x allows
  const Tensor y = linear_product(rows, weight, bias, profile_role, matmul_dtype);  // (N, in) @ (out, in)^T + (out)
  return x.dim() == 2 ? y : view(y, out_shape);                          // (..., out)
}

Tensor linear(const Tensor& x, const QuantizedMatrix& weight, const Tensor& bias) {
  const int64_t in_features = weight.cols();
  check(x.dim() >= 1 && x.size(-1) == in_features, "Linear: input of shape ", x.shape(), " needs a last dim of ",
        in_features);
  Shape out_shape = x.shape();
  out_shape.back() = weight.rows();
  const Tensor rows = reshape(x, {-1, in_features});                        // (N, in)
  Tensor y = raw::matmul_quantized(rows.detach(), weight);                  // (N, in) @ (out, in)^T -> (N, out)
  if (bias.defined()) y = raw::add(y, bias.detach());                       // (N, out) + (out)
  if (rows.requires_grad() && is_grad_enabled()) {
    // The weight is frozen (QLoRA's base): only x gets a gradient, dx (N, in) = dy (N, out) @ W (out, in),
    // with W widened to float32 for the product and let go after it.
    y = record("linear_quantized", {rows}, y, [weight](const Tensor& dy, const Needs&) {
      return Grads{raw::matmul(raw::contiguous(dy), dequantize(weight))};
    });
  }
  return view(y, out_shape);                                                // (..., out)
}

Tensor Linear::forward(const Tensor& x) const {
  const Tensor y = is_quantized() ? linear(x, quantized_weight(), bias_)
                                  : linear(x, weight_, bias_, profile_role_, matmul_dtype_);  // (..., out)
  return lora_ ? add(y, lora_->forward(x)) : y;                                                // + the update
}

void Linear::attach_lora(std::shared_ptr<LoraAdapter> adapter) {
  check(adapter && !lora_, "Linear: one LoRA adapter per layer");
  check(adapter->in_features() == in_features_ && adapter->out_features() == out_features_, "Linear: a LoRA adapter of ",
        adapter->in_features(), " -> ", adapter->out_features(), " features does not fit a Linear of ", in_features_,
        " -> ", out_features_);
  weight_.set_requires_grad(false);
  if (bias_.defined()) bias_.set_requires_grad(false);
  lora_ = register_module("lora", std::move(adapter));
}

void Linear::merge_lora() {
  check(lora_ != nullptr, "Linear: no LoRA adapter to merge");
  check(!is_quantized(), "Linear: a LoRA adapter cannot be merged into a ", dtype_name(weight_.dtype()),
        " weight; merge it into the float32 weights before quantizing");
  NoGradGuard no_grad;
  int64_t row = 0;
  size_t adapted = 0;
  for (const LoraPart& part : lora_->parts()) {
    if (part.adapted) {
      // In float64, rounded once into the weight: the merged weight is W + s B A to the last bit it can hold.
      const Tensor b = raw::to_dtype(lora_->b(adapted), DType::Float64), a = raw::to_dtype(lora_->a(adapted), DType::Float64);
      const Tensor rows = narrow(weight_, 0, row, part.rows);                                        // (rows, in)
      raw::copy_(rows, add(raw::to_dtype(rows, DType::Float64), matmul(b, a) * lora_->scale()));  // + (rows, r) @ (r, in)
      ++adapted;
    }
    row += part.rows;
  }
  lora_.reset();
  remove_module("lora");
}

void Linear::set_matmul_dtype(DType dtype) {
  check(dtype == weight_.dtype() || (dtype == DType::BFloat16 && weight_.dtype() == DType::Float32), "Linear: ",
        dtype_name(dtype), " products need a float32 weight, this one is ", dtype_name(weight_.dtype()));
  matmul_dtype_ = dtype;
}

void Linear::quantize(DType format, QuantizedValues values) {
  const QuantizedMatrix matrix = quantize_parameter("weight", format, values);
  weight_ = matrix.values;
  weight_scale_ = matrix.scales;
}

std::string Linear::describe() const {
  return "Linear(in=" + std::to_string(in_features_) + ", out=" + std::to_string(out_features_) +
         (bias_.defined() ? ", bias)" : ", no bias)");
}

}  // namespace tg::nn
