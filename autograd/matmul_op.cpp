// Differentiable matrix product: forward, then backward.
#include "tinygpt/autograd/matmul_op.h"

#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// The last two dims swapped: a view, which matmul hands to BLAS as a transpose flag.
Tensor matrix_transpose(const Tensor& x) { return raw::transpose(x, -2, -1); }

// (..., R, C) -> (rows, C), rows the product of every dim but the last. Spelt
// out rather than reshape({-1, C}), which cannot infer -1 when C is 0.
Tensor as_rows(const Tensor& x) {
  int64_t rows = 1;
  for (int64_t d = 0; d + 1 < x.dim(); ++d) rows *= x.size(d);
  return raw::reshape(x, {rows, x.size(-1)});
}

// raw::matmul, timed as GEMMs of `role`: x (..., M, K) @ y (..., K, N), 2 M N K FLOPs per matrix.
Tensor profiled_matmul(const Tensor& x, const Tensor& y, const char* role) {
  ProfileScope scope(ProfileFamily::gemm, role);
  Tensor out = raw::matmul(x, y);
  const GemmShape shape{x.dim() == 1 ? 1 : x.size(-2), y.dim() == 1 ? 1 : y.size(-1), x.size(-1)};
  const int64_t matrix = shape.m * shape.n;
  scope.add_gemm(shape, matrix == 0 ? 0 : out.numel() / matrix);
  return out;
}

}  // namespace

// C = A @ B, with A (..., M, K), B (..., K, N), C (..., M, N):
//   dA = dC @ B^T    (..., M, N) @ (..., N, K)
//   dB = A^T @ dC    (..., K, M) @ (..., M, N)
// each summed over the batch dims its operand was broadcast along. A 1-D operand
// is the matrix forward made of it, (1, K) or (K, 1), squeezed back at the end.
Tensor matmul(const Tensor& a, const Tensor& b, const char* profile_role) {
  const bool save_a = any_requires_grad({b}), save_b = any_requires_grad({a});
  return record("matmul", {a, b}, profiled_matmul(a, b, profile_role),
                [a = save_a ? a.detach() : Tensor(), b = save_b ? b.detach() : Tensor(), a_shape = a.shape(),
                 b_shape = b.shape(), profile_role](const Tensor& dc, const Needs& needs) {
                  // Give dC the dims forward dropped for 1-D operands: (..., M, N).
                  Tensor dc_matrix = dc;
                  if (b_shape.size() == 1) dc_matrix = raw::unsqueeze(dc_matrix, dc_matrix.dim());
                  if (a_shape.size() == 1) dc_matrix = raw::unsqueeze(dc_matrix, dc_matrix.dim() - 1);
                  Tensor da, db;
                  if (needs[0]) {
                    const Tensor b_matrix = b.dim() == 1 ? raw::unsqueeze(b, 1) : b;         // (..., K, N)
                    Shape a_matrix_shape = a_shape;                                           // (..., M, K)
                    if (a_shape.size() == 1) a_matrix_shape.insert(a_matrix_shape.begin(), 1);
                    da = profiled_matmul(dc_matrix, matrix_transpose(b_matrix), profile_role);
                    da = raw::reshape(raw::sum_to_shape(da, a_matrix_shape), a_shape);
                  }
                  if (needs[1]) {
                    const Tensor a_matrix = a.dim() == 1 ? raw::unsqueeze(a, 0) : a;  // (..., M, K)
                    Shape b_matrix_shape = b_shape;                                    // (..., K, N)
                    if (b_shape.size() == 1) b_matrix_shape.push_back(1);
                    if (b_matrix_shape.size() == 2 && a_matrix.dim() > 2) {
                      // One B for every batch: fold the batch into the rows, so one gemm
                      // (K, B*M) @ (B*M, N) sums over the batch instead of a sum over B gemms.
                      db = profiled_matmul(matrix_transpose(as_rows(a_matrix)), as_rows(dc_matrix), profile_role);
                    } else {
                      db = raw::sum_to_shape(profiled_matmul(matrix_transpose(a_matrix), dc_matrix, profile_role),
                                             b_matrix_shape);
                    }
                    db = raw::reshape(db, b_shape);
                  }
                  return Grads{da, db};
                }, {save_a ? a : Tensor(), save_b ? b : Tensor()});
}

}  // namespace tg
