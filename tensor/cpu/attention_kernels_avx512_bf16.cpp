// Causal attention's kernels with bfloat16 products (the formulas:
// tensor/cpu/attention_kernels_avx512_bf16.h), compiled with -mavx512bf16.
//
// The loops are attention_kernels.h's: one head per OpenMP thread at a time,
// query blocks of kQueryBlock rows (kBackwardQueryBlock in the backward) that
// multiply only against the keys their last query sees, and the same float32
// softmax. What changes is the products, and the weights saved in bfloat16:
// each head's
// operands are rounded to bfloat16 once and packed into the panels of
// VDPBF16PS (tensor/cpu/bf16_panels_avx512_bf16.h), the operands that every
// block reads (k and v) once per head, the block's own (q, dY, the weights,
// dS) once per block. The tile is 8 rows by 32 columns: attention's products
// are 64 columns wide (HS) or a multiple of 16 keys, which 48-column panels
// would pad by up to a half.
//
// The rounding is VCVTNEPS2BF16: to nearest, ties to even, as tg::bfloat16,
// except that it flushes subnormal inputs to zero, which VDPBF16PS would read
// as zero anyway.
#include "tinygpt/tensor/cpu/attention_kernels_avx512_bf16.h"

#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from an "undefined" vector that
// -Wmaybe-uninitialized reports once inlined (GCC bug 105593): a false alarm.
// (clang has no -Wmaybe-uninitialized.)
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif
#pragma GCC diagnostic ignored "-Wuninitialized"

#include <algorithm>
#include <cmath>
#include <vector>

#include "tinygpt/tensor/cpu/attention_kernels.h"
#include "tinygpt/tensor/cpu/bf16_panels_avx512_bf16.h"

namespace tg::cpu::isa_avx512_bf16 {

namespace {

constexpr int kVectors = 2;              // 16-float vectors per tile row
constexpr int kColumns = 16 * kVectors;  // columns of c per tile: 32

// dst (rows, cols) = src (rows, cols) rounded to bfloat16; rows src_stride and dst_stride apart.
void round_rows(int64_t rows, int64_t cols, const float* src, int64_t src_stride, bfloat16* dst, int64_t dst_stride) {
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; c += 16) {
      const __mmask16 lanes = lanes_below(static_cast<int>(std::min<int64_t>(16, cols - c)));
      const __m256bh rounded = _mm512_cvtneps_pbh(_mm512_maskz_loadu_ps(lanes, src + r * src_stride + c));
      _mm256_mask_storeu_epi16(dst + r * dst_stride + c, lanes, reinterpret_cast<__m256i>(rounded));
    }
}

// The words of `rows` rows (A panels, kRows wide) or columns (B panels,
// kColumns wide) packed `depth` values deep.
int64_t panel_words(int64_t rows, int width, int64_t depth) {
  return ceil_div(rows, width) * width * ceil_div(depth, 2);
}

// A thread's scratch of `count` values (packed words, bfloat16 or float) on
// 64-byte lines. Lines of this namespace's own type, not std::vector<float>:
// a shared template instantiated here, with AVX-512, could be the copy that
// the linker keeps for the whole program (tests/isa/check_isa_confinement.py).
template <class T>
class Scratch {
 public:
  explicit Scratch(int64_t count)
      : lines_(static_cast<size_t>(ceil_div(count * static_cast<int64_t>(sizeof(T)), sizeof(CacheLine)))) {}
  T* data() { return reinterpret_cast<T*>(lines_.data()); }

 private:
  std::vector<CacheLine> lines_;
};
using PackedWords = Scratch<Word>;

// c (m, n) = alpha * A (m, 2 pairs) @ B (2 pairs, n) + beta * c, beta == 0
// ignoring c. A is packed in panels of kRows rows, `pairs` deep; B in panels of
// kColumns columns, b_pairs deep (at least pairs: a block's product reads only
// the first keys of k or v, packed whole). Rows of c are ldc apart.
void multiply(int64_t m, int64_t n, int64_t pairs, const Word* a_panels, const Word* b_panels, int64_t b_pairs,
              float alpha, float beta, float* c, int64_t ldc) {
  for (int64_t col = 0; col < n; col += kColumns)
    for (int64_t row = 0; row < m; row += kRows)
      multiply_panels<kVectors>(pairs, a_panels + row / kRows * pairs * kRows,
                                b_panels + col / kColumns * b_pairs * kColumns, alpha, beta, c + row * ldc + col, ldc,
                                static_cast<int>(std::min<int64_t>(kRows, m - row)),
                                static_cast<int>(std::min<int64_t>(kColumns, n - col)));
}

// causal_softmax_backward_rows (tensor/cpu/attention_kernels.h) on weights
// saved in bfloat16: for each of `rows` rows row_stride apart, grad holds dP
// and becomes scale * P (dP - sum_j P_j dP_j), zero for the masked keys
// first_visible + r .. row_end - 1. The weights are widened exactly (a
// bfloat16 is a float32's upper half) and the sums are float32.
void softmax_backward_rows(const bfloat16* weights, float* grad, int64_t rows, int64_t row_stride,
                           int64_t first_visible, int64_t row_end, float scale) {
  const auto widened = [](const bfloat16* values, __mmask16 lanes) {
    const __m512i halves = _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16(lanes, values));
    return _mm512_castsi512_ps(_mm512_slli_epi32(halves, 16));
  };
  for (int64_t r = 0; r < rows; ++r) {
    const bfloat16* row_weights = weights + r * row_stride;
    float* row_grad = grad + r * row_stride;
    __m512 dots = _mm512_setzero_ps();
    for (int64_t j = 0; j < row_end; j += 16) {
      const __mmask16 lanes = lanes_below(static_cast<int>(row_end - j));
      dots = _mm512_fmadd_ps(widened(row_weights + j, lanes), _mm512_maskz_loadu_ps(lanes, row_grad + j), dots);
    }
    const __m512 dot = _mm512_set1_ps(_mm512_reduce_add_ps(dots)), scales = _mm512_set1_ps(scale);
    for (int64_t j = 0; j < row_end; j += 16) {
      const __mmask16 lanes = lanes_below(static_cast<int>(row_end - j));
      const __m512 difference = _mm512_sub_ps(_mm512_maskz_loadu_ps(lanes, row_grad + j), dot);
      _mm512_mask_storeu_ps(row_grad + j, lanes,
                            _mm512_mul_ps(_mm512_mul_ps(scales, widened(row_weights + j, lanes)), difference));
    }
    std::fill(row_grad + first_visible + r, row_grad + row_end, 0.0f);
  }
}

}  // namespace

// q, k, v -> y (B, Tq, C) contiguous; weights (B, NH, Tq, Tk) in bfloat16
// filled below the causal diagonal when not null.
void attention_forward_bf16(const HeadRows<float>& q, const HeadRows<float>& k, const HeadRows<float>& v, float* y,
                            bfloat16* weights, const AttentionShape& shape) {
  const int64_t batch_heads = shape.batch * shape.heads, queries = shape.queries, keys = shape.keys;
  const int64_t channels = shape.channels(), head_size = shape.head_size;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  const int64_t head_pairs = ceil_div(head_size, 2), key_pairs = ceil_div(keys, 2);
#pragma omp parallel if (shape.worth_parallel())
  {
    Scratch<float> scores(kQueryBlock * keys);  // the block's, (rows, keys)
    Scratch<bfloat16> scratch_weights(weights ? 0 : kQueryBlock * keys);
    // The head's q, k, v rounded: (positions, HS) each, contiguous.
    Scratch<bfloat16> q16(queries * head_size), k16(keys * head_size), v16(keys * head_size);
    PackedWords k_panels(panel_words(keys, kColumns, head_size));  // k^T: (HS, Tk), pairs along HS
    PackedWords v_panels(panel_words(head_size, kColumns, keys));  // v: (Tk, HS), pairs along keys
    PackedWords a_panels(panel_words(kQueryBlock, kRows, std::max(head_size, keys)));
#pragma omp for schedule(static)
    for (int64_t batch_head = 0; batch_head < batch_heads; ++batch_head) {
      const int64_t b = batch_head / shape.heads, h = batch_head % shape.heads;
      round_rows(queries, head_size, q.head(b, h), q.row_stride, q16.data(), head_size);
      round_rows(keys, head_size, k.head(b, h), k.row_stride, k16.data(), head_size);
      round_rows(keys, head_size, v.head(b, h), v.row_stride, v16.data(), head_size);
      pack_panels({k16.data(), head_size, true}, 0, keys, kColumns, 0, head_size, k_panels.data());
      pack_panels({v16.data(), head_size, false}, 0, head_size, kColumns, 0, keys, v_panels.data());
      float* y_head = y + shape.head_start(b, h, queries);  // rows C apart
      bfloat16* weights_head = weights ? weights + batch_head * queries * keys : nullptr;
      for (int64_t first = 0; first < queries; first += kQueryBlock) {
        const int64_t rows = std::min(kQueryBlock, queries - first);
        const int64_t visible_end = shape.offset() + first + rows;  // keys the block's last row sees
        bfloat16* block_weights = weights_head ? weights_head + first * keys : scratch_weights.data();
        pack_panels({q16.data() + first * head_size, head_size, true}, 0, rows, kRows, 0, head_size, a_panels.data());
        multiply(rows, visible_end, head_pairs, a_panels.data(), k_panels.data(), head_pairs, scale, 0.0f,
                 scores.data(), keys);
        causal_softmax_rows(scores.data(), rows, keys, shape.offset() + first + 1, visible_end);
        round_rows(rows, visible_end, scores.data(), keys, block_weights, keys);
        if (weights_head) {  // the backward's larger blocks read these rows further: zeros up to their end
          const int64_t backward_block_end = std::min(queries, (first / kBackwardQueryBlock + 1) * kBackwardQueryBlock);
          for (int64_t r = 0; r < rows; ++r) {
            bfloat16* row = block_weights + r * keys;
            std::fill(row + visible_end, row + shape.offset() + backward_block_end, bfloat16{});
          }
        }
        pack_panels({block_weights, keys, true}, 0, rows, kRows, 0, visible_end, a_panels.data());
        multiply(rows, head_size, ceil_div(visible_end, 2), a_panels.data(), v_panels.data(), key_pairs, 1.0f, 0.0f,
                 y_head + first * channels, channels);
      }
    }
  }
}

// dy (B, Tq, C) contiguous, the saved weights, q, k, v -> dq (B, Tq, NH, HS),
// dk, dv (B, Tk, NH, HS) (each may be null), rows grad_row_stride apart.
void attention_backward_bf16(const float* dy, const bfloat16* weights, const HeadRows<float>& q,
                             const HeadRows<float>& k, const HeadRows<float>& v, float* dq, float* dk, float* dv,
                             int64_t grad_row_stride, const AttentionShape& shape) {
  const int64_t batch_heads = shape.batch * shape.heads, queries = shape.queries, keys = shape.keys;
  const int64_t channels = shape.channels(), head_size = shape.head_size;
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  const int64_t head_pairs = ceil_div(head_size, 2), key_pairs = ceil_div(keys, 2);
  const bool needs_scores_grad = dq || dk;
#pragma omp parallel if (shape.worth_parallel())
  {
    // The head's q, k, v and dy rounded: (positions, HS) each, contiguous.
    Scratch<bfloat16> q16(queries * head_size), k16(keys * head_size), v16(keys * head_size), dy16(queries * head_size);
    Scratch<float> dscores(kBackwardQueryBlock * keys);  // dP, then dS: (rows, keys)
    Scratch<bfloat16> dscores16(kBackwardQueryBlock * keys);
    PackedWords v_panels(panel_words(keys, kColumns, head_size));  // v^T: (HS, Tk), pairs along HS
    PackedWords k_panels(panel_words(head_size, kColumns, keys));  // k: (Tk, HS), pairs along keys
    // A: the block's rows (pairs along HS or keys), or the keys' rows of P^T and dS^T (pairs along the block's rows).
    PackedWords a_panels(std::max(panel_words(kBackwardQueryBlock, kRows, std::max(head_size, keys)),
                                  panel_words(keys, kRows, kBackwardQueryBlock)));
    PackedWords block_panels(panel_words(head_size, kColumns, kBackwardQueryBlock));  // dY or q block: pairs along rows
#pragma omp for schedule(static)
    for (int64_t batch_head = 0; batch_head < batch_heads; ++batch_head) {
      const int64_t b = batch_head / shape.heads, h = batch_head % shape.heads;
      const bfloat16* weights_head = weights + batch_head * queries * keys;
      float* dq_head = dq ? dq + shape.head_start(b, h, queries, grad_row_stride) : nullptr;
      float* dk_head = dk ? dk + shape.head_start(b, h, keys, grad_row_stride) : nullptr;
      float* dv_head = dv ? dv + shape.head_start(b, h, keys, grad_row_stride) : nullptr;
      round_rows(queries, head_size, dy + shape.head_start(b, h, queries), channels, dy16.data(), head_size);
      if (needs_scores_grad) {
        round_rows(keys, head_size, v.head(b, h), v.row_stride, v16.data(), head_size);
        pack_panels({v16.data(), head_size, true}, 0, keys, kColumns, 0, head_size, v_panels.data());
      }
      if (dq_head) {
        round_rows(keys, head_size, k.head(b, h), k.row_stride, k16.data(), head_size);
        pack_panels({k16.data(), head_size, false}, 0, head_size, kColumns, 0, keys, k_panels.data());
      }
      if (dk_head) round_rows(queries, head_size, q.head(b, h), q.row_stride, q16.data(), head_size);
      // dk and dv accumulate over query blocks, last block first: it sees every
      // key, so its products overwrite them all (beta = 0) and nothing needs zeroing.
      const int64_t last_first = (queries - 1) / kBackwardQueryBlock * kBackwardQueryBlock;
      for (int64_t first = last_first; first >= 0; first -= kBackwardQueryBlock) {
        const int64_t rows = std::min(kBackwardQueryBlock, queries - first);
        const int64_t visible_end = shape.offset() + first + rows, row_pairs = ceil_div(rows, 2);
        const float accumulate = first == last_first ? 0.0f : 1.0f;  // beta of the dk and dv products
        const bfloat16* block_weights = weights_head + first * keys;
        const bfloat16* block_dy16 = dy16.data() + first * head_size;
        if (dv_head) {  // dv (visible, HS) += P^T (visible, rows) @ dY_block (rows, HS)
          pack_panels({block_weights, keys, false}, 0, visible_end, kRows, 0, rows, a_panels.data());
          pack_panels({block_dy16, head_size, false}, 0, head_size, kColumns, 0, rows, block_panels.data());
          multiply(visible_end, head_size, row_pairs, a_panels.data(), block_panels.data(), row_pairs, 1.0f,
                   accumulate, dv_head, grad_row_stride);
        }
        if (!needs_scores_grad) continue;
        // dP (rows, visible) = dY_block (rows, HS) @ v^T (HS, visible), then dS in place.
        pack_panels({block_dy16, head_size, true}, 0, rows, kRows, 0, head_size, a_panels.data());
        multiply(rows, visible_end, head_pairs, a_panels.data(), v_panels.data(), head_pairs, 1.0f, 0.0f,
                 dscores.data(), keys);
        softmax_backward_rows(block_weights, dscores.data(), rows, keys, shape.offset() + first + 1, visible_end,
                              scale);
        round_rows(rows, visible_end, dscores.data(), keys, dscores16.data(), keys);
        if (dq_head) {  // dq (rows, HS) = dS (rows, visible) @ k (visible, HS)
          pack_panels({dscores16.data(), keys, true}, 0, rows, kRows, 0, visible_end, a_panels.data());
          multiply(rows, head_size, ceil_div(visible_end, 2), a_panels.data(), k_panels.data(), key_pairs, 1.0f, 0.0f,
                   dq_head + first * grad_row_stride, grad_row_stride);
        }
        if (dk_head) {  // dk (visible, HS) += dS^T (visible, rows) @ q_block (rows, HS)
          pack_panels({dscores16.data(), keys, false}, 0, visible_end, kRows, 0, rows, a_panels.data());
          pack_panels({q16.data() + first * head_size, head_size, false}, 0, head_size, kColumns, 0, rows,
                      block_panels.data());
          multiply(visible_end, head_size, row_pairs, a_panels.data(), block_panels.data(), row_pairs, 1.0f,
                   accumulate, dk_head, grad_row_stride);
        }
      }
    }
  }
}

}  // namespace tg::cpu::isa_avx512_bf16
