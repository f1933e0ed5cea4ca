#include "tinygpt/tensor/matmul.h"

// cblas_sgemv / cblas_dgemv are called here directly: gemv below is their only
// user. Matrix products go through cpu::gemm (tensor/cpu/gemm.h).
#include <cblas.h>

#include <algorithm>
#include <climits>
#include <string>
#include <type_traits>
#include <vector>

#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/view.h"

namespace tg::raw {

namespace {

// How BLAS should read one (rows, cols) matrix of a strided tensor. Row-major
// BLAS takes a matrix either as is (element (i, j) at i * ld + j) or as the
// transpose of a row-major one (element (i, j) at j * ld + i), so a view whose
// last two dims are row-major or column-major needs no copy.
struct MatrixLayout {
  bool fits = false;  // false: neither layout: the operand must be made contiguous
  bool transposed = false;
  int64_t leading_dim = 0;
};

// A size-1 dim never moves, so its stride is free: any stride is accepted there
// and the leading dim is chosen to satisfy BLAS's rule ld >= max(1, columns).
MatrixLayout layout_of(int64_t rows, int64_t cols, int64_t row_stride, int64_t col_stride) {
  if (cols == 1 || col_stride == 1) {
    const int64_t ld = rows == 1 ? std::max<int64_t>(1, cols) : row_stride;
    if (ld >= std::max<int64_t>(1, cols)) return {true, false, ld};
  }
  if (rows == 1 || row_stride == 1) {
    const int64_t ld = cols == 1 ? std::max<int64_t>(1, rows) : col_stride;
    if (ld >= std::max<int64_t>(1, rows)) return {true, true, ld};
  }
  return {};
}

MatrixLayout layout_of(const Tensor& x) {
  return layout_of(x.size(-2), x.size(-1), x.stride(-2), x.stride(-1));
}

// x itself when BLAS can read its last two dims as a matrix (row- or
// column-major), else a contiguous copy.
Tensor blas_readable_matrices(const Tensor& x) { return layout_of(x).fits ? x : contiguous(x); }

// out (n) = x (k) @ b (k, n): one row times a matrix, as a matrix-vector
// product. x's elements are x_step apart, out's contiguous. b is either
// row-major (k, n), read as y = b^T x, or the transpose of a row-major
// (n, k) matrix W (a Linear's weight, the tied embeddings), read as y = W x.
// A float W, every weight of a decode step, goes to our gemv_rows (tensor/cpu/gemv.h),
// which streams it faster than OpenBLAS's sgemv (bench/run_matmul.sh); the rest to BLAS.
template <class T>
void gemv(const MatrixLayout& b, int64_t n, int64_t k, const T* x, int64_t x_step, const T* b_data, T* out) {
  const auto i = [](int64_t value) { return static_cast<int>(value); };
  // In row-major terms gemv reads a (rows, cols) matrix; a transposed b is W (n, k) as stored.
  const bool stored_as_w = b.transposed;
  if constexpr (std::is_same_v<T, float>) {
    if (stored_as_w) {
      std::vector<float> x_contiguous;  // gemv_rows reads x contiguous; k floats are cheap to gather
      if (x_step != 1) {
        x_contiguous.resize(static_cast<size_t>(k));
        for (int64_t p = 0; p < k; ++p) x_contiguous[p] = x[p * x_step];
        x = x_contiguous.data();
      }
      cpu::gemv_rows(n, k, 1.0f, b_data, b.leading_dim, x, 0.0f, out);
      return;
    }
  }
  const CBLAS_TRANSPOSE transpose = stored_as_w ? CblasNoTrans : CblasTrans;
  const int64_t rows = stored_as_w ? n : k, cols = stored_as_w ? k : n;
  // out is a fresh buffer: zeroed and added to (beta = 1), since BLAS's beta = 0
  // may scale its garbage by 0 instead of overwriting it, keeping a NaN.
  std::fill_n(out, n, T(0));
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemv(CblasRowMajor, transpose, i(rows), i(cols), 1.0f, b_data, i(b.leading_dim), x, i(x_step), 1.0f, out, 1);
  } else {
    cblas_dgemv(CblasRowMajor, transpose, i(rows), i(cols), 1.0, b_data, i(b.leading_dim), x, i(x_step), 1.0, out, 1);
  }
}

// out (m, n) = op(a) (m, k) @ op(b) (k, n).
// A single row (m == 1, each step of generation) goes to gemv: OpenBLAS's sgemm
// packs (copies) all of b before multiplying even for one row, which for the
// weights of a decode step more than doubles the memory traffic.
template <class T>
void matrix_product(const MatrixLayout& a, const MatrixLayout& b, int64_t m, int64_t n, int64_t k, const T* a_data,
                    const T* b_data, T* out, int64_t out_ld) {
  if (m == 1) {
    // The row's elements are 1 apart as stored, or leading_dim apart (a column read as a row).
    gemv<T>(b, n, k, a_data, a.transposed ? a.leading_dim : 1, b_data, out);
    return;
  }
  cpu::gemm(a.transposed, b.transposed, m, n, k, T(1), a_data, a.leading_dim, b_data, b.leading_dim, T(0), out, out_ld);
}

// BLAS takes int sizes and strides.
void check_fits_int(const Tensor& x, const char* op) {
  for (int64_t d = 0; d < x.dim(); ++d)
    check(x.shape()[d] <= INT_MAX && x.strides()[d] <= INT_MAX, op, ": shape ", x.shape(), " with strides ",
          x.strides(), " is too large for BLAS (int sizes)");
}

// Element offset of each batch's matrix, for a tensor whose leading dims (all
// but the last two) are the batch: batch b in row-major order over those dims.
std::vector<int64_t> batch_offsets(const Tensor& x) {
  const int64_t batch_dims = x.dim() - 2;
  const Shape batch_shape(x.shape().begin(), x.shape().begin() + batch_dims);
  std::vector<int64_t> offsets;
  offsets.reserve(static_cast<size_t>(numel(batch_shape)));
  std::vector<int64_t> index(batch_dims, 0);
  for (int64_t b = 0, count = numel(batch_shape); b < count; ++b) {
    int64_t offset = 0;
    for (int64_t d = 0; d < batch_dims; ++d) offset += index[d] * x.strides()[d];
    offsets.push_back(offset);
    for (int64_t d = batch_dims; d-- > 0;) {  // odometer increment
      if (++index[d] < batch_shape[d]) break;
      index[d] = 0;
    }
  }
  return offsets;
}

// True when the batch dims of x (all but the last two) walk memory with one
// stride: batch b starts at b * stride. 0 for a batch that is broadcast throughout.
bool single_batch_stride(const Tensor& x, int64_t& stride) {
  stride = 0;
  int64_t inner_batches = 1;  // batches inside the dims seen so far
  bool stride_known = false;
  for (int64_t d = x.dim() - 3; d >= 0; --d) {
    const int64_t size = x.shape()[d];
    if (size == 1) continue;
    if (!stride_known) {
      stride = x.strides()[d];
      stride_known = true;
    } else if (x.strides()[d] != stride * inner_batches) {
      return false;
    }
    inner_batches *= size;
  }
  return true;
}

// out (..., M, N) = a (..., M, K) @ b (..., K, N), all with the same batch dims
// (a and b possibly expanded) and out contiguous.
template <class T>
void batched_gemm(const Tensor& out, const Tensor& a, const Tensor& b) {
  const int64_t m = a.size(-2), k = a.size(-1), n = b.size(-1);
  const MatrixLayout a_layout = layout_of(a), b_layout = layout_of(b);
  const T* a_data = a.data<T>();
  const T* b_data = b.data<T>();
  T* out_data = out.data<T>();
  const int64_t batches = out.numel() / std::max<int64_t>(1, m * n);

  // The common case x (B, T, C) @ w (C, N): when b is one matrix for every batch
  // and a's rows run on through its batches, the batch folds into the rows and a
  // single large gemm (B*T, C) @ (C, N) replaces B small ones.
  int64_t a_batch_stride = 0, b_batch_stride = 0;
  const bool b_shared = single_batch_stride(b, b_batch_stride) && b_batch_stride == 0;
  const bool a_rows_run_on = !a_layout.transposed && single_batch_stride(a, a_batch_stride) &&
                             (batches == 1 || a_batch_stride == m * a_layout.leading_dim);
  if (b_shared && a_rows_run_on && batches * m <= INT_MAX) {
    matrix_product<T>(a_layout, b_layout, batches * m, n, k, a_data, b_data, out_data, n);
    return;
  }
  // Otherwise one gemm per batch; each is multi-threaded inside OpenBLAS, so this
  // loop stays serial (BLAS must not be called from an OpenMP parallel region).
  const std::vector<int64_t> a_offsets = batch_offsets(a), b_offsets = batch_offsets(b);
  for (int64_t batch = 0; batch < batches; ++batch)
    matrix_product<T>(a_layout, b_layout, m, n, k, a_data + a_offsets[batch], b_data + b_offsets[batch],
                      out_data + batch * m * n, n);
}

// Batch dims broadcast as in elementwise ops. The error names the full shapes
// first; the message is built only when there is one (matmul is a hot path).
Shape broadcast_batch_dims(const Shape& a_batch, const Shape& b_batch, const Tensor& a, const Tensor& b) {
  try {
    return broadcast_shapes(a_batch, b_batch, "matmul");
  } catch (const Error& error) {
    const std::string reason = std::string(error.what()).substr(std::string("matmul: ").size());
    fail("matmul: batch dims of shapes ", a.shape(), " and ", b.shape(), ": ", reason);
  }
}

}  // namespace

Tensor matmul(const Tensor& a, const Tensor& b) {
  check(a.dim() >= 1 && b.dim() >= 1, "matmul: both operands need at least 1 dim, got shapes ", a.shape(), " and ",
        b.shape());
  check(a.dtype() == b.dtype(), "matmul: dtypes differ: ", dtype_name(a.dtype()), " ", a.shape(), " and ",
        dtype_name(b.dtype()), " ", b.shape());
  // A 1-D left operand is a row (1, K), a 1-D right operand a column (K, 1); the
  // added dim is dropped from the result again.
  const Tensor a_matrix = a.dim() == 1 ? unsqueeze(a, 0) : a;  // (..., M, K)
  const Tensor b_matrix = b.dim() == 1 ? unsqueeze(b, 1) : b;  // (..., K, N)
  const int64_t m = a_matrix.size(-2), k = a_matrix.size(-1), n = b_matrix.size(-1);
  check(k == b_matrix.size(-2), "matmul: shapes ", a.shape(), " and ", b.shape(), " cannot be multiplied (", k, " != ",
        b_matrix.size(-2), ")");

  const Shape a_batch(a_matrix.shape().begin(), a_matrix.shape().end() - 2);
  const Shape b_batch(b_matrix.shape().begin(), b_matrix.shape().end() - 2);
  const Shape batch = broadcast_batch_dims(a_batch, b_batch, a, b);
  Shape a_shape = batch, b_shape = batch, out_shape = batch;
  a_shape.insert(a_shape.end(), {m, k});
  b_shape.insert(b_shape.end(), {k, n});
  out_shape.insert(out_shape.end(), {m, n});

  return visit_floating(a.dtype(), "matmul", [&]<class T>() {
    Tensor out = Tensor::empty(out_shape, a.dtype());
    if (out.numel() > 0 && k == 0) fill_(out, 0);  // an empty sum
    if (out.numel() > 0 && k > 0) {
      // Copy (if at all) before expanding, so a broadcast operand is copied once, not per batch.
      const Tensor a_operand = expand(blas_readable_matrices(a_matrix), a_shape);
      const Tensor b_operand = expand(blas_readable_matrices(b_matrix), b_shape);
      check_fits_int(a_operand, "matmul");
      check_fits_int(b_operand, "matmul");
      batched_gemm<T>(out, a_operand, b_operand);
    }
    Shape result_shape = batch;
    if (a.dim() > 1) result_shape.push_back(m);
    if (b.dim() > 1) result_shape.push_back(n);
    return view(out, result_shape);
  });
}

}  // namespace tg::raw
