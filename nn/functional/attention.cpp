// Causal attention: forward and backward kernels, and the op.
//
// Letters as in attention.h. Work is split over the B * NH (batch, head) pairs,
// one OpenMP thread per pair at a time; inside a pair the products are BLAS
// calls, which the OpenMP build of OpenBLAS runs single-threaded when called
// inside a parallel region (exactly what we want: the pairs already fill the cores).
//
// Causality is exploited, not just masked: queries are processed in blocks of
// kQueryBlock rows, and a block only multiplies against the keys its last query
// can see. For Tq = Tk = 256 that skips about 3/8 of the dense work.
//
// Forward, per pair and query block (rows i0..i1, keys 0..visible_end):
//   scores  = scale * q_block @ k^T                (rows, keys)    scale = 1/sqrt(HS)
//   weights = causal softmax of each row           (rows, keys)    saved for backward
//   y_block = weights @ v                          (rows, HS)
//
// Backward, with P the weights and dY the gradient of y:
//   dP      = dY_block @ v^T                       (rows, keys)
//   dS_ij   = P_ij (dP_ij - sum_j' P_ij' dP_ij')   (the softmax backward), times scale
//   dq      = dS @ k                               (rows, HS)
//   dk     += dS^T @ q_block                       (keys, HS)
//   dv     += P^T @ dY_block                       (keys, HS)
//
// Saving the weights costs B * NH * Tq * Tk floats (100 MB per layer at B=64,
// NH=6, T=256); recomputing them in backward (as FlashAttention does) would save
// that memory but costs one more q k^T product and softmax, and measured slower here.
#include "nn/functional/attention.h"

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <type_traits>
#include <vector>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/vector_math.h"
#include "tensor/factory.h"
#include "tensor/gemm.h"
#include "tensor/gemv.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

constexpr int64_t kQueryBlock = 64;

// Below this many multiply-adds (pairs * Tq * Tk * HS, one product) a call runs on
// the calling thread: waking the team costs more than the work (generation steps,
// tests). BLAS then decides alone, and stays single-threaded for such sizes.
constexpr int64_t kParallelWork = int64_t{1} << 18;

struct AttentionShape {
  int64_t batch, heads, queries, keys, head_size;
  int64_t channels() const { return heads * head_size; }
  int64_t offset() const { return keys - queries; }  // absolute position of query 0
};

bool worth_parallel(const AttentionShape& shape) {
  return shape.batch * shape.heads * shape.queries * shape.keys * shape.head_size >= kParallelWork;
}

// One (B, NH, T, HS) operand as BLAS sees it: a base pointer, strides for b and h,
// and the stride between rows (positions).
template <class T>
struct HeadRows {
  const T* data;
  int64_t batch_stride, head_stride, row_stride;
  const T* pair(int64_t b, int64_t h) const { return data + b * batch_stride + h * head_stride; }
};

// A view BLAS can read in place: last dim contiguous and rows at least HS apart
// (a leading dimension below HS is illegal). Anything else is copied first.
Tensor blas_readable_head_rows(const Tensor& x) {
  const int64_t head_size = x.size(3);
  const bool rows_ok = x.size(2) == 1 || x.stride(2) >= head_size;
  const bool last_ok = x.size(3) == 1 || x.stride(3) == 1;
  return rows_ok && last_ok ? x : raw::contiguous(x);
}

template <class T>
HeadRows<T> head_rows(const Tensor& x) {
  return {x.data<T>(), x.stride(0), x.stride(1), std::max(x.stride(2), x.size(3))};
}

// Turns row r of raw scores (keys 0..visible-1 valid) into softmax weights, and
// zeroes keys visible..row_end-1 (inside the block's product but masked).
template <class T>
void causal_softmax_row(T* row, int64_t visible, int64_t row_end) {
  T row_max = row[0];
#pragma omp simd reduction(max : row_max)
  for (int64_t j = 1; j < visible; ++j) row_max = std::max(row_max, row[j]);
  T sum = 0;
#pragma omp simd reduction(+ : sum)
  for (int64_t j = 0; j < visible; ++j) {
    row[j] = exp_fast(row[j] - row_max);
    sum += row[j];
  }
  const T inverse = static_cast<T>(1) / sum;
#pragma omp simd
  for (int64_t j = 0; j < visible; ++j) row[j] *= inverse;
  for (int64_t j = visible; j < row_end; ++j) row[j] = 0;
}

}  // namespace

// Two matrix-vector products and a softmax, without BLAS: for one row its
// packing and dispatch cost more than the arithmetic (12 heads x 2 calls per
// layer per generated token).
void attend_one_query(const float* q, const float* k, const float* v, int64_t keys, int64_t head_size,
                      int64_t k_row_stride, int64_t v_row_stride, float* scores, float* y) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  raw::gemv_rows_serial(keys, head_size, scale, k, k_row_stride, q, 0.0f, scores);  // scores_j = scale * k_j . q
  causal_softmax_row(scores, keys, keys);
  std::fill(y, y + head_size, 0.0f);
  for (int64_t j = 0; j < keys; ++j) {  // y = sum_j weights_j v_j
    const float weight = scores[j];
    const float* v_row = v + j * v_row_stride;
#pragma omp simd
    for (int64_t d = 0; d < head_size; ++d) y[d] += weight * v_row[d];
  }
}

namespace {

// q, k, v -> y (B, Tq, C) contiguous; weights (B, NH, Tq, Tk) filled below the
// causal diagonal when not null (else a per-thread scratch is used).
template <class T>
void attention_forward_kernel(const HeadRows<T>& q, const HeadRows<T>& k, const HeadRows<T>& v, T* y, T* weights,
                              const AttentionShape& shape) {
  const int64_t pairs = shape.batch * shape.heads;
  const int64_t keys = shape.keys, channels = shape.channels(), head_size = shape.head_size;
  const T scale = static_cast<T>(1) / std::sqrt(static_cast<T>(head_size));
#pragma omp parallel if (worth_parallel(shape))
  {
    std::vector<T> scratch(weights ? 0 : kQueryBlock * keys);
#pragma omp for schedule(static)
    for (int64_t pair = 0; pair < pairs; ++pair) {
      const int64_t b = pair / shape.heads, h = pair % shape.heads;
      const T* q_pair = q.pair(b, h);
      const T* k_pair = k.pair(b, h);
      const T* v_pair = v.pair(b, h);
      T* y_pair = y + b * shape.queries * channels + h * head_size;  // rows C apart
      if constexpr (std::is_same_v<T, float>) {
        if (shape.queries == 1 && !weights) {  // a generation step: no BLAS call for one row
          attend_one_query(q_pair, k_pair, v_pair, keys, head_size, k.row_stride, v.row_stride, scratch.data(), y_pair);
          continue;
        }
      }
      T* weights_pair = weights ? weights + pair * shape.queries * keys : nullptr;
      for (int64_t first = 0; first < shape.queries; first += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, shape.queries - first);
        const int64_t visible_end = shape.offset() + first + rows;  // keys the block's last row sees
        T* scores = weights_pair ? weights_pair + first * keys : scratch.data();
        raw::gemm(false, true, rows, visible_end, head_size, scale, q_pair + first * q.row_stride, q.row_stride,
                  k_pair, k.row_stride, T(0), scores, keys);
        for (int64_t r = 0; r < rows; ++r)
          causal_softmax_row(scores + r * keys, shape.offset() + first + r + 1, visible_end);
        raw::gemm(false, false, rows, head_size, visible_end, T(1), scores, keys, v_pair, v.row_stride, T(0),
                  y_pair + first * channels, channels);
      }
    }
  }
}

// dy (B, Tq, C) contiguous, the saved weights, q, k, v
//   -> dq (B, Tq, NH, HS), dk, dv (B, Tk, NH, HS), contiguous (each may be null)
template <class T>
void attention_backward_kernel(const T* dy, const T* weights, const HeadRows<T>& q, const HeadRows<T>& k,
                               const HeadRows<T>& v, T* dq, T* dk, T* dv, const AttentionShape& shape) {
  const int64_t pairs = shape.batch * shape.heads;
  const int64_t keys = shape.keys, channels = shape.channels(), head_size = shape.head_size;
  const T scale = static_cast<T>(1) / std::sqrt(static_cast<T>(head_size));
  const bool needs_scores_grad = dq || dk;
#pragma omp parallel if (worth_parallel(shape))
  {
    std::vector<T> dscores(needs_scores_grad ? kQueryBlock * keys : 0);
#pragma omp for schedule(static)
    for (int64_t pair = 0; pair < pairs; ++pair) {
      const int64_t b = pair / shape.heads, h = pair % shape.heads;
      const T* q_pair = q.pair(b, h);
      const T* k_pair = k.pair(b, h);
      const T* v_pair = v.pair(b, h);
      const T* dy_pair = dy + b * shape.queries * channels + h * head_size;
      const T* weights_pair = weights + pair * shape.queries * keys;
      // Gradients in (B, T, NH, HS) layout: rows C apart, like y.
      T* dq_pair = dq ? dq + b * shape.queries * channels + h * head_size : nullptr;
      T* dk_pair = dk ? dk + b * keys * channels + h * head_size : nullptr;
      T* dv_pair = dv ? dv + b * keys * channels + h * head_size : nullptr;
      for (int64_t j = 0; j < keys; ++j) {  // dk and dv accumulate over query blocks
        if (dk_pair) std::memset(dk_pair + j * channels, 0, head_size * sizeof(T));
        if (dv_pair) std::memset(dv_pair + j * channels, 0, head_size * sizeof(T));
      }
      for (int64_t first = 0; first < shape.queries; first += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, shape.queries - first);
        const int64_t visible_end = shape.offset() + first + rows;
        const T* block_weights = weights_pair + first * keys;
        const T* block_dy = dy_pair + first * channels;
        if (dv_pair)
          raw::gemm(true, false, visible_end, head_size, rows, T(1), block_weights, keys, block_dy, channels, T(1),
                    dv_pair, channels);
        if (!needs_scores_grad) continue;
        T* block_dscores = dscores.data();
        raw::gemm(false, true, rows, visible_end, head_size, T(1), block_dy, channels, v_pair, v.row_stride, T(0),
                  block_dscores, keys);
        for (int64_t r = 0; r < rows; ++r) {
          const int64_t visible = shape.offset() + first + r + 1;
          const T* p = block_weights + r * keys;
          T* ds = block_dscores + r * keys;  // holds dP, becomes dS
          T dot = 0;
#pragma omp simd reduction(+ : dot)
          for (int64_t j = 0; j < visible; ++j) dot += p[j] * ds[j];
#pragma omp simd
          for (int64_t j = 0; j < visible; ++j) ds[j] = scale * p[j] * (ds[j] - dot);
          for (int64_t j = visible; j < visible_end; ++j) ds[j] = 0;
        }
        if (dq_pair)
          raw::gemm(false, false, rows, head_size, visible_end, T(1), block_dscores, keys, k_pair, k.row_stride,
                    T(0), dq_pair + first * channels, channels);
        if (dk_pair)
          raw::gemm(true, false, visible_end, head_size, rows, T(1), block_dscores, keys,
                    q_pair + first * q.row_stride, q.row_stride, T(1), dk_pair, channels);
      }
    }
  }
}

AttentionShape check_arguments(const char* op, const Tensor& q, const Tensor& k, const Tensor* v) {
  check(q.dim() == 4 && k.dim() == 4 && (!v || v->dim() == 4), op, ": q, k, v must be (B, NH, T, HS), got q ",
        q.shape(), ", k ", k.shape(), v ? ", v " : "", v ? shape_str(v->shape()) : "");
  check(q.size(0) == k.size(0) && q.size(1) == k.size(1) && q.size(3) == k.size(3), op, ": q ", q.shape(), " and k ",
        k.shape(), " must agree in B, NH and HS");
  check(!v || v->shape() == k.shape(), op, ": k ", k.shape(), " and v ", v ? shape_str(v->shape()) : "",
        " must have the same shape");
  check(k.size(2) >= q.size(2), op, ": needs at least as many keys as queries, got q ", q.shape(), " and k ",
        k.shape());
  check(is_floating(q.dtype()) && k.dtype() == q.dtype() && (!v || v->dtype() == q.dtype()), op,
        ": q, k, v must share one floating dtype, got ", dtype_name(q.dtype()), ", ", dtype_name(k.dtype()),
        v ? ", " : "", v ? dtype_name(v->dtype()) : "");
  return {q.size(0), q.size(1), q.size(2), k.size(2), q.size(3)};
}

// A (B, T, NH, HS) contiguous buffer seen as (B, NH, T, HS): the layout of the
// gradients returned (any layout is allowed; this one matches how q, k, v are
// usually carved out of a (B, T, 3C) projection, so the permute back is free).
Tensor head_major_gradient(const AttentionShape& shape, int64_t positions, DType dtype) {
  return raw::permute(Tensor::empty({shape.batch, positions, shape.heads, shape.head_size}, dtype), {0, 2, 1, 3});
}

}  // namespace

Tensor causal_attention(const Tensor& q, const Tensor& k, const Tensor& v) {
  const AttentionShape shape = check_arguments("causal_attention", q, k, &v);
  const Tensor q_rows = blas_readable_head_rows(q), k_rows = blas_readable_head_rows(k);
  const Tensor v_rows = blas_readable_head_rows(v);
  const bool save_weights = any_requires_grad({q, k, v});
  Tensor y = Tensor::empty({shape.batch, shape.queries, shape.channels()}, q.dtype());
  Tensor weights = save_weights ? Tensor::empty({shape.batch, shape.heads, shape.queries, shape.keys}, q.dtype())
                                : Tensor();
  visit_floating(q.dtype(), "causal_attention", [&]<class T>() {
    attention_forward_kernel<T>(head_rows<T>(q_rows), head_rows<T>(k_rows), head_rows<T>(v_rows), y.data<T>(),
                                save_weights ? weights.data<T>() : nullptr, shape);
  });
  return record("causal_attention", {q, k, v}, y,
                [q = q_rows.detach(), k = k_rows.detach(), v = v_rows.detach(), weights, shape](
                    const Tensor& dy, const std::vector<bool>& needs_grad) {
                  const Tensor dy_contiguous = raw::contiguous(dy);
                  Tensor dq = needs_grad[0] ? head_major_gradient(shape, shape.queries, q.dtype()) : Tensor();
                  Tensor dk = needs_grad[1] ? head_major_gradient(shape, shape.keys, q.dtype()) : Tensor();
                  Tensor dv = needs_grad[2] ? head_major_gradient(shape, shape.keys, q.dtype()) : Tensor();
                  visit_floating(q.dtype(), "causal_attention backward", [&]<class T>() {
                    attention_backward_kernel<T>(dy_contiguous.data<T>(), weights.data<T>(), head_rows<T>(q),
                                                 head_rows<T>(k), head_rows<T>(v), dq.defined() ? dq.data<T>() : nullptr,
                                                 dk.defined() ? dk.data<T>() : nullptr,
                                                 dv.defined() ? dv.data<T>() : nullptr, shape);
                  });
                  return std::vector<Tensor>{dq, dk, dv};
                });
}

Tensor causal_attention_weights(const Tensor& q, const Tensor& k) {
  const AttentionShape shape = check_arguments("causal_attention_weights", q, k, nullptr);
  const Tensor q_rows = blas_readable_head_rows(q), k_rows = blas_readable_head_rows(k);
  // The forward kernel also needs v and writes y; v = k (same shape) serves, and y is discarded.
  Tensor y = Tensor::empty({shape.batch, shape.queries, shape.channels()}, q.dtype());
  Tensor weights = zeros({shape.batch, shape.heads, shape.queries, shape.keys}, q.dtype());
  visit_floating(q.dtype(), "causal_attention_weights", [&]<class T>() {
    attention_forward_kernel<T>(head_rows<T>(q_rows), head_rows<T>(k_rows), head_rows<T>(k_rows), y.data<T>(),
                                weights.data<T>(), shape);
  });
  return weights;
}

Tensor causal_mask(int64_t queries, int64_t keys) {
  check(queries >= 1 && keys >= queries, "causal_mask: need 1 <= queries <= keys, got ", queries, " and ", keys);
  Tensor mask = Tensor::empty({queries, keys}, DType::Bool);
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j) mask.data<bool>()[i * keys + j] = j > keys - queries + i;
  return mask;
}

Tensor causal_attention_reference(const Tensor& q, const Tensor& k, const Tensor& v) {
  const AttentionShape shape = check_arguments("causal_attention_reference", q, k, &v);
  const Tensor mask = causal_mask(shape.queries, shape.keys);  // (Tq, Tk)
  const double scale = 1.0 / std::sqrt(static_cast<double>(shape.head_size));
  const Tensor scores = tg::matmul(q, tg::transpose(k, -2, -1)) * scale;  // (B, NH, Tq, Tk)
  const Tensor masked_scores = tg::masked_fill(scores, mask, -INFINITY);
  const Tensor weights = tg::softmax(masked_scores, -1);                    // (B, NH, Tq, Tk)
  const Tensor heads = tg::matmul(weights, v);                               // (B, NH, Tq, HS)
  return tg::reshape(tg::permute(heads, {0, 2, 1, 3}), {shape.batch, shape.queries, shape.channels()});
}

}  // namespace tg::nn
