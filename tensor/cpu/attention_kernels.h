// Causal attention's kernels, forward then backward (the op, its checks and its
// reference composition: nn/functional/attention.h).
//
// Letters: B batch, NH heads, Tq queries, Tk keys (Tk >= Tq), HS head size,
// C = NH * HS. Query i sits at position Tk - Tq + i and sees keys 0..Tk-Tq+i.
//
//   q (B, NH, Tq, HS), k, v (B, NH, Tk, HS), read in place (HeadRows)
//     -> y (B, Tq, C) contiguous, heads concatenated; weights (B, NH, Tq, Tk) saved for backward
//
// Work is split over the B * NH heads of the batch (`batch_head` below), one
// OpenMP thread per head at a time. Inside a head the products are
// small_gemm calls (tensor/cpu/small_gemm.h), register tiles on the calling
// thread with no packing: at these sizes (64 x 64 x 32 per head in cpu-small)
// OpenBLAS spent as long packing its operands as multiplying. The products that
// read k or v transposed (q k^T, dY v^T) take them from a copy turned around
// once per head.
//
// Causality is exploited, not just masked: queries are processed in blocks of
// kQueryBlock rows (kBackwardQueryBlock in the backward), and a block only
// multiplies against the keys its last query can see. For Tq = Tk = 64 blocks
// of 16 skip 3/8 of the dense work, for 256 almost half; with small_gemm's
// register tiles this is about twice as fast as BLAS calls on blocks of 64
// (figures: docs/performance.md, "The measurements behind the kernels' constants").
//
// Forward, per head and query block (rows i0..i1, keys 0..visible_end):
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
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/cpu/simd.h"
#include "tinygpt/tensor/cpu/small_gemm.h"
#include "tinygpt/tensor/cpu/vector_math.h"

namespace tg::cpu {

// q, k, v of one head: (Tq, HS), (Tk, HS), (Tk, HS), rows as in their HeadRows.
template <class T>
struct HeadInputs {
  const T *q, *k, *v;
};

// One copy per instruction set (tensor/runtime/isa.h); callers outside the kernel table get the AVX2 one.
inline namespace TG_ISA {

template <class T>
HeadInputs<T> head_inputs(const HeadRows<T>& q, const HeadRows<T>& k, const HeadRows<T>& v, int64_t b, int64_t h) {
  return {q.head(b, h), k.head(b, h), v.head(b, h)};
}

// Forward of a block of rows of scores, each row_end long and row_stride
// apart -> weights: row r sees keys 0..first_visible+r-1, which turn into their
// softmax; the keys after them up to row_end (inside the block's product but
// masked) turn into zeros. Not raw::softmax's rows: they mask by index, in
// place, and sum in float (the accumulation policy: tensor/softmax.h).
//
// Two choices for speed on short rows (64 keys at most in cpu-small):
//  - the masked keys are set to -inf first, whose exp is 0, so that every loop
//    runs over the whole row: whole vectors when row_end is a multiple of their
//    length, instead of one leftover element at a time;
//  - each step (max, exp, sum, scale) runs over all the rows before the next,
//    so the rows' independent work overlaps instead of waiting, row by row, on
//    one chain of max -> exp -> sum -> divide.
inline constexpr int64_t kSoftmaxRowsAtOnce = 16;  // the rows whose steps interleave
template <class T>
void causal_softmax_rows(T* scores, int64_t rows, int64_t row_stride, int64_t first_visible, int64_t row_end) {
  T row_max[kSoftmaxRowsAtOnce], inverse_sum[kSoftmaxRowsAtOnce];
  for (int64_t first = 0; first < rows; first += kSoftmaxRowsAtOnce) {
    const int64_t count = std::min(kSoftmaxRowsAtOnce, rows - first);
    T* block = scores + first * row_stride;
    for (int64_t r = 0; r < count; ++r) {
      T* row = block + r * row_stride;
      const int64_t visible = first_visible + first + r;
      for (int64_t j = visible; j < row_end; ++j) row[j] = -std::numeric_limits<T>::infinity();
      row_max[r] = simd::max_of(row, visible);
    }
    for (int64_t r = 0; r < count; ++r) {
      T* row = block + r * row_stride;
      const T shift = row_max[r];
#pragma omp simd
      for (int64_t j = 0; j < row_end; ++j) row[j] = exp_fast(row[j] - shift);
    }
    for (int64_t r = 0; r < count; ++r) inverse_sum[r] = static_cast<T>(1) / simd::sum_of(block + r * row_stride, row_end);
    for (int64_t r = 0; r < count; ++r) {
      T* row = block + r * row_stride;
      const T scale = inverse_sum[r];
#pragma omp simd
      for (int64_t j = 0; j < row_end; ++j) row[j] *= scale;
    }
  }
}

// Its backward, weights (row_end), grad (row_end) -> grad, for each of `rows`
// rows row_stride apart: grad holds dP, the gradient of the weights, and
// becomes scale * P (dP - sum_j P_j dP_j), the gradient of q k^T (the scores
// before the scale); zero for the masked keys first_visible+r..row_end-1. Their
// weights are zero, so the loops run over the whole row; their gradients are
// then set to zero outright, so that a value the row does not see (an inf in
// v, say) cannot reach it. The dot products first, for all rows, as above.
template <class T>
void causal_softmax_backward_rows(const T* weights, T* grad, int64_t rows, int64_t row_stride, int64_t first_visible,
                                  int64_t row_end, T scale) {
  T dots[kSoftmaxRowsAtOnce];
  for (int64_t first = 0; first < rows; first += kSoftmaxRowsAtOnce) {
    const int64_t count = std::min(kSoftmaxRowsAtOnce, rows - first);
    const T* block_weights = weights + first * row_stride;
    T* block_grad = grad + first * row_stride;
    for (int64_t r = 0; r < count; ++r)
      dots[r] = simd::dot(block_weights + r * row_stride, block_grad + r * row_stride, row_end);
    for (int64_t r = 0; r < count; ++r) {
      const T* row_weights = block_weights + r * row_stride;
      T* row_grad = block_grad + r * row_stride;
      const T dot = dots[r];
#pragma omp simd
      for (int64_t j = 0; j < row_end; ++j) row_grad[j] = scale * row_weights[j] * (row_grad[j] - dot);
      for (int64_t j = first_visible + first + r; j < row_end; ++j) row_grad[j] = 0;
    }
  }
}

// One query of one head against `keys` keys and values, all of which it sees:
// causal attention's kernel with Tq = 1 (a generation step), and the fused
// decode step's (models/gpt_decode.cpp), which so gets the same numbers.
//   q (HS), k (keys, HS) rows k_row_stride apart, v likewise -> y (HS); scores (keys) is scratch.
// Two matrix-vector products and a softmax, without BLAS: for one row its
// packing and dispatch cost more than the arithmetic (12 heads x 2 calls per
// layer per generated token).
inline void attend_one_query(const float* q, const float* k, const float* v, int64_t keys, int64_t head_size,
                             int64_t k_row_stride, int64_t v_row_stride, float* scores, float* y) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  gemv_rows_serial(keys, head_size, scale, k, k_row_stride, q, 0.0f, scores);  // scores_j = scale * k_j . q
  causal_softmax_rows(scores, 1, keys, keys, keys);
  std::fill(y, y + head_size, 0.0f);
  for (int64_t j = 0; j < keys; ++j) {  // y = sum_j weights_j v_j
    const float weight = scores[j];
    const float* v_row = v + j * v_row_stride;
#pragma omp simd
    for (int64_t d = 0; d < head_size; ++d) y[d] += weight * v_row[d];
  }
}

// q, k, v -> y (B, Tq, C) contiguous; weights (B, NH, Tq, Tk) filled below the
// causal diagonal when not null (else a per-thread scratch is used).
template <class T>
void attention_forward_kernel(const HeadRows<T>& q, const HeadRows<T>& k, const HeadRows<T>& v, T* y, T* weights,
                              const AttentionShape& shape) {
  const int64_t batch_heads = shape.batch * shape.heads;
  const int64_t keys = shape.keys, channels = shape.channels(), head_size = shape.head_size;
  const T scale = static_cast<T>(1) / std::sqrt(static_cast<T>(head_size));
  // A generation step (one query, nothing saved): no products, no transposed k.
  const bool one_query_steps = std::is_same_v<T, float> && shape.queries == 1 && !weights;
#pragma omp parallel if (shape.worth_parallel())
  {
    std::vector<T> scratch(weights ? 0 : kQueryBlock * keys);
    std::vector<T> k_transposed(one_query_steps ? 0 : head_size * keys);  // (HS, Tk)
#pragma omp for schedule(static)
    for (int64_t batch_head = 0; batch_head < batch_heads; ++batch_head) {
      const int64_t b = batch_head / shape.heads, h = batch_head % shape.heads;
      const HeadInputs<T> in = head_inputs(q, k, v, b, h);
      T* y_head = y + shape.head_start(b, h, shape.queries);  // rows C apart
      if constexpr (std::is_same_v<T, float>) {
        if (one_query_steps) {  // a generation step: one row, two matrix-vector products
          attend_one_query(in.q, in.k, in.v, keys, head_size, k.row_stride, v.row_stride, scratch.data(), y_head);
          continue;
        }
      }
      transpose_rows(keys, head_size, in.k, k.row_stride, k_transposed.data(), keys);
      T* weights_head = weights ? weights + batch_head * shape.queries * keys : nullptr;
      for (int64_t first = 0; first < shape.queries; first += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, shape.queries - first);
        const int64_t visible_end = shape.offset() + first + rows;  // keys the block's last row sees
        T* scores = weights_head ? weights_head + first * keys : scratch.data();
        small_gemm(rows, visible_end, head_size, scale, in.q + first * q.row_stride, k_transposed.data(), T(0), scores,
                   {.a_row = q.row_stride, .a_col = 1, .b_row = keys, .c_row = keys});
        causal_softmax_rows(scores, rows, keys, shape.offset() + first + 1, visible_end);
        if (weights_head) {  // the backward's larger blocks read these rows further: zeros up to their end
          const int64_t backward_block_end =
              std::min(shape.queries, (first / kBackwardQueryBlock + 1) * kBackwardQueryBlock);
          for (int64_t r = 0; r < rows; ++r)
            std::fill(scores + r * keys + visible_end, scores + r * keys + shape.offset() + backward_block_end, T(0));
        }
        small_gemm(rows, head_size, visible_end, T(1), scores, in.v, T(0), y_head + first * channels,
                   {.a_row = keys, .a_col = 1, .b_row = v.row_stride, .c_row = channels});
      }
    }
  }
}

// dy (B, Tq, C) contiguous, the saved weights, q, k, v
//   -> dq (B, Tq, NH, HS), dk, dv (B, Tk, NH, HS) (each may be null), rows
//      grad_row_stride apart: C for buffers of their own, 3C for the three
//      parts of one (B, T, 3C) gradient (causal_attention_qkv)
template <class T>
void attention_backward_kernel(const T* dy, const T* weights, const HeadRows<T>& q, const HeadRows<T>& k,
                               const HeadRows<T>& v, T* dq, T* dk, T* dv, int64_t grad_row_stride,
                               const AttentionShape& shape) {
  const int64_t batch_heads = shape.batch * shape.heads;
  const int64_t keys = shape.keys, channels = shape.channels(), head_size = shape.head_size;
  const T scale = static_cast<T>(1) / std::sqrt(static_cast<T>(head_size));
  const bool needs_scores_grad = dq || dk;
#pragma omp parallel if (shape.worth_parallel())
  {
    std::vector<T> dscores(needs_scores_grad ? kBackwardQueryBlock * keys : 0);
    std::vector<T> v_transposed(needs_scores_grad ? head_size * keys : 0);  // (HS, Tk)
#pragma omp for schedule(static)
    for (int64_t batch_head = 0; batch_head < batch_heads; ++batch_head) {
      const int64_t b = batch_head / shape.heads, h = batch_head % shape.heads;
      const HeadInputs<T> in = head_inputs(q, k, v, b, h);
      const T* dy_head = dy + shape.head_start(b, h, shape.queries);
      const T* weights_head = weights + batch_head * shape.queries * keys;
      // Gradients in (B, T, NH, HS) layout, rows grad_row_stride apart.
      T* dq_head = dq ? dq + shape.head_start(b, h, shape.queries, grad_row_stride) : nullptr;
      T* dk_head = dk ? dk + shape.head_start(b, h, keys, grad_row_stride) : nullptr;
      T* dv_head = dv ? dv + shape.head_start(b, h, keys, grad_row_stride) : nullptr;
      if (needs_scores_grad) transpose_rows(keys, head_size, in.v, v.row_stride, v_transposed.data(), keys);
      // dk and dv accumulate over query blocks, last block first: it sees every
      // key, so its products overwrite them all (beta = 0) and nothing needs zeroing.
      const int64_t last_first = (shape.queries - 1) / kBackwardQueryBlock * kBackwardQueryBlock;
      for (int64_t first = last_first; first >= 0; first -= kBackwardQueryBlock) {
        const int64_t rows = std::min(kBackwardQueryBlock, shape.queries - first);
        const int64_t visible_end = shape.offset() + first + rows;
        const T accumulate = first == last_first ? T(0) : T(1);  // beta of the dk and dv products
        const T* block_weights = weights_head + first * keys;
        const T* block_dy = dy_head + first * channels;
        // P^T and dS^T below: the block's (rows, keys) read with strides swapped.
        if (dv_head)
          small_gemm(visible_end, head_size, rows, T(1), block_weights, block_dy, accumulate, dv_head,
                     {.a_row = 1, .a_col = keys, .b_row = channels, .c_row = grad_row_stride});
        if (!needs_scores_grad) continue;
        T* block_dscores = dscores.data();  // dP, then dS
        small_gemm(rows, visible_end, head_size, T(1), block_dy, v_transposed.data(), T(0), block_dscores,
                   {.a_row = channels, .a_col = 1, .b_row = keys, .c_row = keys});
        causal_softmax_backward_rows(block_weights, block_dscores, rows, keys, shape.offset() + first + 1, visible_end,
                                     scale);
        if (dq_head)
          small_gemm(rows, head_size, visible_end, T(1), block_dscores, in.k, T(0), dq_head + first * grad_row_stride,
                     {.a_row = keys, .a_col = 1, .b_row = k.row_stride, .c_row = grad_row_stride});
        if (dk_head)
          small_gemm(visible_end, head_size, rows, T(1), block_dscores, in.q + first * q.row_stride, accumulate,
                     dk_head, {.a_row = 1, .a_col = keys, .b_row = q.row_stride, .c_row = grad_row_stride});
      }
    }
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
