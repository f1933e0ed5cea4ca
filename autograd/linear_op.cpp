// Differentiable x @ W^T: forward, then backward (the formulas: linear_op.h).
#include "autograd/linear_op.h"

#include <limits>

#include "autograd/matmul_op.h"
#include "autograd/node.h"
#include "autograd/view_ops.h"
#include "tensor/bfloat16_convert.h"
#include "tensor/gemm.h"
#include "tensor/gemm_bf16.h"
#include "tensor/matmul.h"
#include "tensor/profile.h"
#include "tensor/view.h"

namespace tg {

namespace {

// c (m, n) = op(a) @ op(b) + beta * c on contiguous operands, timed as a GEMM of `role`.
void profiled_gemm(const char* role, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                   const Tensor& a, const Tensor& b, double beta, const Tensor& c) {
  ProfileScope scope(ProfileFamily::gemm, role);
  const int64_t lda = transpose_a ? m : k, ldb = transpose_b ? k : n;
  visit_floating(c.dtype(), "linear_product", [&]<class T>() {
    raw::gemm(transpose_a, transpose_b, m, n, k, T(1), a.data<T>(), lda, b.data<T>(), ldb, static_cast<T>(beta),
              c.data<T>(), n);
  });
  scope.add_gemm({m, n, k}, 1);
}

// rows (rows, cols) float32, contiguous -> the same rounded to bfloat16.
Tensor to_bfloat16(const Tensor& rows) {
  Tensor rounded = Tensor::empty(rows.shape(), DType::BFloat16);
  raw::float_to_bfloat16_rows(rows.size(0), rows.size(1), rows.data<float>(), rows.size(1), rounded.data<bfloat16>(),
                              rows.size(1));
  return rounded;
}

// c (m, n) = op(a) @ op(b) + beta * c with bfloat16 operands and float32 c, timed as a GEMM of `role`.
void profiled_gemm_bf16(const char* role, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                        const Tensor& a, const Tensor& b, float beta, const Tensor& c) {
  ProfileScope scope(ProfileFamily::gemm, role);
  const int64_t lda = transpose_a ? m : k, ldb = transpose_b ? k : n;
  raw::gemm_bf16(transpose_a, transpose_b, m, n, k, 1.0f, a.data<bfloat16>(), lda, b.data<bfloat16>(), ldb, beta,
                 c.data<float>(), n);
  scope.add_gemm({m, n, k}, 1);
}

// linear_product with bfloat16 products (the formulas: linear_op.h); x and W are
// contiguous float32 (N, in) and (out, in).
Tensor linear_product_bf16(const Tensor& x, const Tensor& weight, const Tensor& x_rows, const Tensor& weight_rows,
                           const char* profile_role) {
  const int64_t rows = x_rows.size(0), in = x_rows.size(1), out = weight_rows.size(0);
  const Tensor x_bf16 = to_bfloat16(x_rows), weight_bf16 = to_bfloat16(weight_rows);
  Tensor y = Tensor::empty({rows, out}, DType::Float32);
  profiled_gemm_bf16(profile_role, false, true, rows, out, in, x_bf16, weight_bf16, 0.0f, y);  // (N, in) @ (in, out)

  const bool save_x = any_requires_grad({weight}), save_weight = any_requires_grad({x});
  return record("linear_product", {x, weight}, y,
                [x_bf16 = save_x ? x_bf16 : Tensor(), weight_bf16 = save_weight ? weight_bf16 : Tensor(), rows, in, out,
                 profile_role](const Tensor& dy, const Needs& needs) {
                  const Tensor dy_bf16 = to_bfloat16(raw::contiguous(dy));  // (N, out)
                  Tensor dx, dweight;
                  if (needs[0]) {  // dx (N, in) = dy (N, out) @ W (out, in)
                    dx = Tensor::empty({rows, in}, DType::Float32);
                    profiled_gemm_bf16(profile_role, false, false, rows, in, out, dy_bf16, weight_bf16, 0.0f, dx);
                  }
                  if (needs[1]) {  // dW (out, in) = dy^T (out, N) @ x (N, in), into W's buffer when it has one
                    const Tensor buffer = leaf_grad_buffer(1);
                    dweight = buffer.defined() ? Tensor() : Tensor::empty({out, in}, DType::Float32);
                    profiled_gemm_bf16(profile_role, true, false, out, in, rows, dy_bf16, x_bf16,
                                       buffer.defined() ? 1.0f : 0.0f, buffer.defined() ? buffer : dweight);
                  }
                  return Grads{dx, dweight};
                });
}

}  // namespace

Tensor linear_product(const Tensor& x, const Tensor& weight, const char* profile_role, DType matmul_dtype) {
  check(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "linear_product: input of shape ",
        x.shape(), " and weight of shape ", weight.shape(), " do not make (N, in) @ (out, in)^T");
  check(x.dtype() == weight.dtype() && is_floating(x.dtype()), "linear_product: dtypes ", dtype_name(x.dtype()),
        " and ", dtype_name(weight.dtype()), " (both must be the same floating type)");
  const int64_t rows = x.size(0), in = x.size(1), out = weight.size(0);
  constexpr int64_t kBlasLimit = std::numeric_limits<int>::max();
  // Empty products, and sizes past BLAS's int, take matmul's general path.
  if (rows == 0 || in == 0 || out == 0 || rows > kBlasLimit || in > kBlasLimit || out > kBlasLimit)
    return matmul(x, transpose(weight, 0, 1), profile_role);

  check(matmul_dtype == DType::Float32 || (matmul_dtype == DType::BFloat16 && x.dtype() == DType::Float32),
        "linear_product: products in ", dtype_name(matmul_dtype), " take float32 operands, got ", dtype_name(x.dtype()));
  const Tensor x_rows = raw::contiguous(x), weight_rows = raw::contiguous(weight);
  if (matmul_dtype == DType::BFloat16) return linear_product_bf16(x, weight, x_rows, weight_rows, profile_role);
  Tensor y;
  {
    // raw::matmul, as matmul(x, transpose(W)) does: one row takes its gemv
    // (tensor/gemv.h), as the fused decode step does, so the two agree bit for bit.
    ProfileScope scope(ProfileFamily::gemm, profile_role);
    y = raw::matmul(x_rows, raw::transpose(weight_rows, 0, 1));  // (N, in) @ (in, out)
    scope.add_gemm({rows, out, in}, 1);
  }

  const bool save_x = any_requires_grad({weight}), save_weight = any_requires_grad({x});
  return record("linear_product", {x, weight}, y,
                [x_rows = save_x ? x_rows.detach() : Tensor(), weight_rows = save_weight ? weight_rows.detach() : Tensor(),
                 rows, in, out, profile_role](const Tensor& dy, const Needs& needs) {
                  const Tensor dy_rows = raw::contiguous(dy);  // (N, out)
                  Tensor dx, dweight;
                  if (needs[0]) {  // dx (N, in) = dy (N, out) @ W (out, in)
                    dx = Tensor::empty({rows, in}, dy.dtype());
                    profiled_gemm(profile_role, false, false, rows, in, out, dy_rows, weight_rows, 0, dx);
                  }
                  if (needs[1]) {  // dW (out, in) = dy^T (out, N) @ x (N, in), into W's buffer when it has one
                    const Tensor buffer = leaf_grad_buffer(1);
                    if (buffer.defined()) {
                      profiled_gemm(profile_role, true, false, out, in, rows, dy_rows, x_rows, 1, buffer);
                    } else {
                      dweight = Tensor::empty({out, in}, dy.dtype());
                      profiled_gemm(profile_role, true, false, out, in, rows, dy_rows, x_rows, 0, dweight);
                    }
                  }
                  return Grads{dx, dweight};
                });
}

}  // namespace tg
