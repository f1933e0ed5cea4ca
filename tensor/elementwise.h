// Elementwise kernels with NumPy broadcasting. No gradients here (see
// autograd/elementwise_ops.h for the differentiable versions).
//
// Both operands of a binary op must have the same dtype; the result has the
// broadcast shape. Comparisons return bool tensors. A double scalar operand takes
// the tensor's dtype.
#pragma once
#include "tinygpt/tensor/tensor.h"

namespace tg::raw {

// Binary arithmetic (float32, float64; int64 for add/sub/mul).
Tensor add(const Tensor& a, const Tensor& b);
Tensor sub(const Tensor& a, const Tensor& b);
Tensor mul(const Tensor& a, const Tensor& b);
Tensor div(const Tensor& a, const Tensor& b);
Tensor pow(const Tensor& base, const Tensor& exponent);
Tensor maximum(const Tensor& a, const Tensor& b);
Tensor add(const Tensor& a, double b);
Tensor mul(const Tensor& a, double b);
Tensor pow(const Tensor& base, double exponent);
Tensor rsub(double a, const Tensor& b);  // a - b
// A 0-d tensor of `value` in the dtype of `like`, the scalar operand of `op`. An integer
// tensor cannot hold 2.5: converted, it became 2 and [1, 2, 3] * 2.5 gave [2, 4, 6].
// Refused instead, naming op (PyTorch promotes to floating point; div refuses integers).
Tensor scalar_like(double value, const Tensor& like, const char* op);

// Comparisons -> bool.
Tensor eq(const Tensor& a, const Tensor& b);
Tensor ne(const Tensor& a, const Tensor& b);
Tensor lt(const Tensor& a, const Tensor& b);
Tensor le(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, const Tensor& b);
Tensor ge(const Tensor& a, const Tensor& b);
Tensor gt(const Tensor& a, double b);

// Unary (floating point).
Tensor neg(const Tensor& x);
Tensor exp(const Tensor& x);
Tensor log(const Tensor& x);
Tensor sqrt(const Tensor& x);
Tensor tanh(const Tensor& x);
Tensor sign(const Tensor& x);  // -1, 0 or 1

// condition ? a : b, all three broadcast together; condition is bool.
Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
// x with `value` wherever mask (bool, broadcast to x's shape) is true.
Tensor masked_fill(const Tensor& x, const Tensor& mask, double value);

// In place: dst += src (src broadcast to dst's shape); dst *= factor.
void add_(const Tensor& dst, const Tensor& src);
void mul_(const Tensor& dst, double factor);

}  // namespace tg::raw
