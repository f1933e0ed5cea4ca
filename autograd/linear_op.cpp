// Differentiable x @ W^T: forward, then backward (the formulas: linear_op.h).
#include "tinygpt/autograd/linear_op.h"

#include <omp.h>

#include <algorithm>
#include <limits>

#include "tinygpt/autograd/elementwise_ops.h"
#include "tinygpt/autograd/matmul_op.h"
#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/view_ops.h"
#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/cpu/product_tiles.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// The fewest rows per thread for which forward_product splits a product by rows.
constexpr int64_t kRowsPerThread = 256;
// With BLAS kernels whose sums depend on the thread count, the most tiles
// (tensor/cpu/product_tiles.h) each of `products` products run at once is cut
// into: the threads of the ceiling (tensor/runtime/threads.h) shared between them. The
// ceiling is fixed for a run, so the count the governor picks below it changes
// no number. Cutting finer costs more than it balances (docs/performance.md).
int64_t tiles_per_product(int64_t products) { return (thread_ceiling() + products - 1) / products; }

bool blas_independent_of_threads() {
  static const bool independent = blas_results_independent_of_threads();  // tensor/runtime/threads.h
  return independent;
}

// cpu::gemm (tensor/cpu/gemm.h) as one callable for ProductTiles.
constexpr auto blas_gemm = [](auto... arguments) { cpu::gemm(arguments...); };

// rows (rows, cols) float32, contiguous -> the same rounded to bfloat16.
Tensor to_bfloat16(const Tensor& rows) {
  Tensor rounded = Tensor::empty(rows.shape(), DType::BFloat16);
  cpu::float_to_bfloat16_rows(rows.size(0), rows.size(1), rows.data<float>(), rows.size(1), rounded.data<bfloat16>(),
                              rows.size(1));
  return rounded;
}

// c (m, n) = op(a) @ op(b) + beta * c with bfloat16 operands and float32 c, timed as a GEMM of `role`.
void profiled_gemm_bf16(const char* role, bool transpose_a, bool transpose_b, int64_t m, int64_t n, int64_t k,
                        const Tensor& a, const Tensor& b, float beta, const Tensor& c) {
  ProfileScope scope(ProfileFamily::gemm, role);
  const int64_t lda = transpose_a ? m : k, ldb = transpose_b ? k : n;
  if (cpu::bf16_gemm_kernel() == cpu::Bf16GemmKernel::float32_sgemm && !blas_independent_of_threads()) {
    // Widened to float32 for OpenBLAS: fixed tiles, as in forward_product.
    cpu::ProductTiles tiles;
    const auto bf16_gemm = [](auto... arguments) { cpu::gemm_bf16(arguments...); };
    tiles.add(tiles_per_product(1), bf16_gemm, transpose_a, transpose_b, m, n, k, a.data<bfloat16>(), lda,
              b.data<bfloat16>(), ldb, beta, c.data<float>(), n);
    tiles.run();
  } else {
    cpu::gemm_bf16(transpose_a, transpose_b, m, n, k, 1.0f, a.data<bfloat16>(), lda, b.data<bfloat16>(), ldb, beta,
                   c.data<float>(), n);
  }
  scope.add_gemm({m, n, k}, 1);
}

// The backward's two products, timed together as the GEMMs of `role`:
//
//   dx (N, in)   = dy (N, out) @ W (out, in)                   when dx is defined
//   dW (out, in) = dy^T (out, N) @ x (N, in) (+ dW if accumulate)  when dweight is defined
//
// On a team of exactly two threads the two run at once, one per thread (inside
// a parallel region each BLAS call keeps to its own thread): they have the same
// FLOPs, and a small GEMM on one thread skips the split and the wait that two
// threads sharing it cost (docs/performance.md has the figures).
// OpenBLAS's AVX-512 kernels give the same numbers either way; with kernels
// whose sums depend on the thread count both products are cut into tiles fixed
// by their shapes and the thread ceiling, run together (tensor/cpu/product_tiles.h).
void backward_products(const char* role, int64_t rows, int64_t in, int64_t out, const Tensor& dy_rows,
                       const Tensor& weight_rows, const Tensor& x_rows, const Tensor& dx, const Tensor& dweight,
                       bool accumulate) {
  ProfileScope scope(ProfileFamily::gemm, role);
  visit_floating(dy_rows.dtype(), "linear_product", [&]<class T>() {
    if (!blas_independent_of_threads()) {
      cpu::ProductTiles tiles;
      const int64_t tiles_each = tiles_per_product(dx.defined() && dweight.defined() ? 2 : 1);
      if (dx.defined())
        tiles.add(tiles_each, blas_gemm, false, false, rows, in, out, dy_rows.data<T>(), out,
                  weight_rows.data<T>(), in, T(0), dx.data<T>(), in);
      if (dweight.defined())
        tiles.add(tiles_each, blas_gemm, true, false, out, in, rows, dy_rows.data<T>(), out,
                  x_rows.data<T>(), in, T(accumulate ? 1 : 0), dweight.data<T>(), in);
      return tiles.run();
    }
    const auto input_product = [&] {
      cpu::gemm(false, false, rows, in, out, T(1), dy_rows.data<T>(), out, weight_rows.data<T>(), in, T(0),
                dx.data<T>(), in);
    };
    const auto weight_product = [&] {
      cpu::gemm(true, false, out, in, rows, T(1), dy_rows.data<T>(), out, x_rows.data<T>(), in, T(accumulate ? 1 : 0),
                dweight.data<T>(), in);
    };
    if (dx.defined() && dweight.defined() && omp_get_max_threads() == 2 && !omp_in_parallel()) {
#pragma omp parallel num_threads(2)
      {
        if (omp_get_thread_num() == 0) input_product();
        else weight_product();
      }
    } else {
      if (dx.defined()) input_product();
      if (dweight.defined()) weight_product();
    }
  });
  const int64_t products = (dx.defined() ? 1 : 0) + (dweight.defined() ? 1 : 0);
  scope.add_gemm({rows, in, out}, products);
  scope.count_as_calls(products);
}

// y (N, out) = x (N, in) @ W^T (+ y when accumulate), contiguous operands. On
// a team of two threads or more each thread multiplies its own run of rows, a
// BLAS call of its own, rather than all of them sharing one call: no packing
// split between threads and no waiting for each other inside the product.
// Each thread reads all of W, so below kRowsPerThread rows each that extra
// reading costs more than it saves (both measured in docs/performance.md). A
// row's numbers do not depend on the rows beside it.
void forward_product(const Tensor& x, const Tensor& weight, bool accumulate, const Tensor& y) {
  const int64_t rows = x.size(0), in = x.size(1), out = weight.size(0);
  visit_floating(y.dtype(), "linear_product", [&]<class T>() {
    if (!blas_independent_of_threads()) {  // fixed tiles: the same numbers on any thread count below the ceiling
      cpu::ProductTiles tiles;
      tiles.add(tiles_per_product(1), blas_gemm, false, true, rows, out, in, x.data<T>(), in, weight.data<T>(), in,
                T(accumulate ? 1 : 0), y.data<T>(), out);
      return tiles.run();
    }
    const auto product = [&](int64_t first, int64_t count) {
      cpu::gemm(false, true, count, out, in, T(1), x.data<T>() + first * in, in, weight.data<T>(), in,
                T(accumulate ? 1 : 0), y.data<T>() + first * out, out);
    };
    const int threads = omp_in_parallel() ? 1 : omp_get_max_threads();
    if (threads < 2 || rows < kRowsPerThread * threads) return product(0, rows);
    const int64_t per_thread = (rows + threads - 1) / threads;
#pragma omp parallel num_threads(threads)
    {
      const int64_t first = std::min<int64_t>(rows, omp_get_thread_num() * per_thread);
      const int64_t count = std::min(per_thread, rows - first);
      if (count > 0) product(first, count);
    }
  });
}

// y (rows, out) for x @ W^T to go into: with a bias, every row a copy of it,
// which the GEMM adds the product onto (beta = 1: this replaces BLAS's zeroing
// of y, and a pass that would add the bias afterwards); without, uninitialised
// (beta = 0).
Tensor rows_of_bias(int64_t rows, int64_t out, const Tensor& bias, DType dtype) {
  Tensor y = Tensor::empty({rows, out}, dtype);
  if (bias.defined()) raw::copy_(y, raw::expand(bias, {rows, out}));
  return y;
}

// The inputs a product records: the bias only when there is one.
std::vector<Tensor> product_inputs(const Tensor& x, const Tensor& weight, const Tensor& bias) {
  return bias.defined() ? std::vector<Tensor>{x, weight, bias} : std::vector<Tensor>{x, weight};
}

// db (out) = the sum of dy (N, out) over its rows.
Tensor bias_grad(const Tensor& dy_rows) { return raw::sum(dy_rows, {0}); }

// linear_product with bfloat16 products (the formulas: linear_op.h); x and W are
// contiguous float32 (N, in) and (out, in).
Tensor linear_product_bf16(const Tensor& x, const Tensor& weight, const Tensor& bias, const Tensor& x_rows,
                           const Tensor& weight_rows, const char* profile_role) {
  const int64_t rows = x_rows.size(0), in = x_rows.size(1), out = weight_rows.size(0);
  const Tensor x_bf16 = to_bfloat16(x_rows), weight_bf16 = to_bfloat16(weight_rows);
  Tensor y = rows_of_bias(rows, out, bias, DType::Float32);
  profiled_gemm_bf16(profile_role, false, true, rows, out, in, x_bf16, weight_bf16, bias.defined() ? 1.0f : 0.0f,
                     y);  // (N, in) @ (in, out) + y

  const bool save_x = any_requires_grad({weight}), save_weight = any_requires_grad({x});
  return record("linear_product", product_inputs(x, weight, bias), y,
                [x_bf16 = save_x ? x_bf16 : Tensor(), weight_bf16 = save_weight ? weight_bf16 : Tensor(), rows, in, out,
                 profile_role](const Tensor& dy, const Needs& needs) {
                  const Tensor dy_rows = raw::contiguous(dy);  // (N, out)
                  const Tensor dy_bf16 = to_bfloat16(dy_rows);
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
                  // A slot per input: a frozen bias (LoRA, partial fine-tuning) gets an empty one.
                  if (needs.size() == 3) return Grads{dx, dweight, needs[2] ? bias_grad(dy_rows) : Tensor()};  // db (out)
                  return Grads{dx, dweight};
                });
}

}  // namespace

Tensor linear_product(const Tensor& x, const Tensor& weight, const Tensor& bias, const char* profile_role,
                      DType matmul_dtype) {
  check(x.dim() == 2 && weight.dim() == 2 && x.size(1) == weight.size(1), "linear_product: input of shape ",
        x.shape(), " and weight of shape ", weight.shape(), " do not make (N, in) @ (out, in)^T");
  check(x.dtype() == weight.dtype() && is_floating(x.dtype()), "linear_product: dtypes ", dtype_name(x.dtype()),
        " and ", dtype_name(weight.dtype()), " (both must be the same floating type)");
  if (bias.defined())
    check(bias.dim() == 1 && bias.size(0) == weight.size(0) && bias.dtype() == weight.dtype(), "linear_product: a ",
          dtype_name(bias.dtype()), " bias of shape ", bias.shape(), " does not fit a ", dtype_name(weight.dtype()),
          " weight of shape ", weight.shape(), " (it needs shape (", weight.size(0),
          ",) and the weight's dtype)");
  const int64_t rows = x.size(0), in = x.size(1), out = weight.size(0);
  constexpr int64_t kBlasLimit = std::numeric_limits<int>::max();
  // Empty products, and sizes past BLAS's int, take matmul's general path.
  if (rows == 0 || in == 0 || out == 0 || rows > kBlasLimit || in > kBlasLimit || out > kBlasLimit) {
    const Tensor y = matmul(x, transpose(weight, 0, 1), profile_role);
    return bias.defined() ? add(y, bias) : y;
  }

  check(matmul_dtype == DType::Float32 || (matmul_dtype == DType::BFloat16 && x.dtype() == DType::Float32),
        "linear_product: products in ", dtype_name(matmul_dtype), " take float32 operands, got ", dtype_name(x.dtype()));
  const Tensor x_rows = raw::contiguous(x), weight_rows = raw::contiguous(weight);
  if (matmul_dtype == DType::BFloat16) return linear_product_bf16(x, weight, bias, x_rows, weight_rows, profile_role);
  Tensor y;
  {
    ProfileScope scope(ProfileFamily::gemm, profile_role);
    if (rows == 1) {
      // raw::matmul, as matmul(x, transpose(W)) does: one row takes its gemv
      // (tensor/cpu/gemv.h), as the fused decode step does, so the two agree bit for bit.
      y = raw::matmul(x_rows, raw::transpose(weight_rows, 0, 1));  // (1, in) @ (in, out)
      if (bias.defined()) raw::add_(y, bias);
    } else {
      y = rows_of_bias(rows, out, bias, x.dtype());
      forward_product(x_rows, weight_rows, bias.defined(), y);  // (N, in) @ (in, out) + y
    }
    scope.add_gemm({rows, out, in}, 1);
  }

  const bool save_x = any_requires_grad({weight}), save_weight = any_requires_grad({x});
  return record("linear_product", product_inputs(x, weight, bias), y,
                [x_rows = save_x ? x_rows.detach() : Tensor(), weight_rows = save_weight ? weight_rows.detach() : Tensor(),
                 rows, in, out, profile_role](const Tensor& dy, const Needs& needs) {
                  const Tensor dy_rows = raw::contiguous(dy);  // (N, out)
                  const Tensor dx = needs[0] ? Tensor::empty({rows, in}, dy.dtype()) : Tensor();
                  // dW goes into W's gradient buffer when it has one.
                  const Tensor buffer = needs[1] ? leaf_grad_buffer(1) : Tensor();
                  const Tensor dweight = needs[1] && !buffer.defined() ? Tensor::empty({out, in}, dy.dtype()) : Tensor();
                  backward_products(profile_role, rows, in, out, dy_rows, weight_rows, x_rows, dx,
                                    buffer.defined() ? buffer : dweight, buffer.defined());
                  // A slot per input: a frozen bias (LoRA, partial fine-tuning) gets an empty one.
                  if (needs.size() == 3) return Grads{dx, dweight, needs[2] ? bias_grad(dy_rows) : Tensor()};  // db (out)
                  return Grads{dx, dweight};
                }, {save_x ? x_rows : Tensor(), save_weight ? weight_rows : Tensor()});
}

Tensor linear_product(const Tensor& x, const Tensor& weight, const char* profile_role, DType matmul_dtype) {
  return linear_product(x, weight, Tensor(), profile_role, matmul_dtype);
}

}  // namespace tg
