// x (float32) rounded to bfloat16 and widened back: the numbers a bfloat16
// product reads (tensor/cpu/gemm_bf16.h, tensor/quantized_matmul.h), for tests
// that compute the expected result in float32. The rounding is the library's
// own (copy_ into a bfloat16 tensor, tensor/bfloat16.h).
#pragma once
#include "tinygpt/tensor/tensor.h"
#include "tinygpt/tensor/view.h"

namespace tg::testing {

inline Tensor rounded_to_bfloat16(const Tensor& x) {
  const Tensor rounded = Tensor::empty(x.shape(), DType::BFloat16);
  raw::copy_(rounded, x);
  const Tensor widened = Tensor::empty(x.shape(), DType::Float32);
  raw::copy_(widened, rounded);
  return widened;
}

}  // namespace tg::testing
