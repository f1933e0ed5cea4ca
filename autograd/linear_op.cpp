// Differentiable x @ W^T: forward, then backward (the formulas: linear_op.h).
#include "autograd/linear_op.h"

#include <limits>

#include "autograd/matmul_op.h"
#include "autograd/node.h"
#include "autograd/view_ops.h"
#include "tensor/gemm.h"
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

}  // namespace

Tensor linear_product(const Tensor& x, const Tensor& weight, const char* profile_role) {
  check(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "linear_product: input of shape ",
        x.shape(), " and weight of shape ", weight.shape(), " do not make (N, in) @ (out, in)^T");
  check(x.dtype() == weight.dtype() && is_floating(x.dtype()), "linear_product: dtypes ", dtype_name(x.dtype()),
        " and ", dtype_name(weight.dtype()), " (both must be the same floating type)");
  const int64_t rows = x.size(0), in = x.size(1), out = weight.size(0);
  constexpr int64_t kBlasLimit = std::numeric_limits<int>::max();
  // Empty products, and sizes past BLAS's int, take matmul's general path.
  if (rows == 0 || in == 0 || out == 0 || rows > kBlasLimit || in > kBlasLimit || out > kBlasLimit)
    return matmul(x, transpose(weight, 0, 1), profile_role);

  const Tensor x_rows = raw::contiguous(x), weight_rows = raw::contiguous(weight);
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
