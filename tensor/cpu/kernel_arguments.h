// The arguments of the kernels that are more than pointers and sizes: the
// shape and operands of attention, AdamW's scalars, a LayerNorm row's moments.
// Apart from the kernels (attention_kernels.h, adamw_kernels.h,
// layer_norm_kernels.h) so that the kernel table (kernel_table.h) and the ops
// that fill them (nn/functional/) need not see the loops. The same in every
// instruction set's copy, so outside TG_ISA.
#pragma once
#include <algorithm>
#include <cstdint>

namespace tg::cpu {

// Attention (attention_kernels.h).

// Query rows per block: the forward's, and the backward's. The backward's dk
// and dv products add a block's share onto every key row it sees, so small
// blocks there mean many passes over dk and dv with short sums; 32 measured
// better than 16 for T = 256 and the same for T = 64 (docs/performance.md).
inline constexpr int64_t kQueryBlock = 16;
inline constexpr int64_t kBackwardQueryBlock = 32;
static_assert(kBackwardQueryBlock % kQueryBlock == 0, "a forward block must lie inside one backward block");

// Below this many multiply-adds (B * NH * Tq * Tk * HS, one product) a call runs
// on the calling thread: waking the team costs more than the work (generation
// steps, tests).
inline constexpr int64_t kAttentionParallelWork = int64_t{1} << 18;

struct AttentionShape {
  int64_t batch, heads, queries, keys, head_size;
  int64_t channels() const { return heads * head_size; }
  int64_t offset() const { return keys - queries; }  // absolute position of query 0
  bool worth_parallel() const { return batch * heads * queries * keys * head_size >= kAttentionParallelWork; }
  // Where head h of batch b starts in a (B, positions, NH, HS) buffer, rows
  // row_stride apart (C, or 3C for a part of one (B, T, 3C) gradient): y, dy
  // and the gradients, whose heads sit side by side in each row.
  int64_t head_start(int64_t b, int64_t h, int64_t positions, int64_t row_stride) const {
    return b * positions * row_stride + h * head_size;
  }
  int64_t head_start(int64_t b, int64_t h, int64_t positions) const { return head_start(b, h, positions, channels()); }
};

// The multiply-adds of one of the block products above (q_block @ k^T, say),
// summed over every head and query block: rows * visible_end * HS each. The
// forward makes 2 such products, the backward 4 (dv, dP, dq, dk), at 2 FLOPs
// per multiply-add (the profile's attention rows, tensor/runtime/profile.h).
inline double attention_block_multiply_adds(const AttentionShape& shape, int64_t query_block) {
  double per_head = 0;
  for (int64_t first = 0; first < shape.queries; first += query_block) {
    const int64_t rows = std::min(query_block, shape.queries - first);
    per_head += static_cast<double>(rows) * static_cast<double>(shape.offset() + first + rows);
  }
  return per_head * static_cast<double>(shape.batch * shape.heads * shape.head_size);
}

// One (B, NH, T, HS) operand as the kernels read it: a base pointer, strides for
// b and h, and the stride between rows (positions), at least HS.
template <class T>
struct HeadRows {
  const T* data;
  int64_t batch_stride, head_stride, row_stride;
  const T* head(int64_t b, int64_t h) const { return data + b * batch_stride + h * head_stride; }
};

// AdamW (adamw_kernels.h).

// The factors of one step, computed in double and rounded to float as torch does.
struct AdamWScalars {
  float decay_factor;  // 1 - lr * weight_decay
  float beta1, one_minus_beta1, beta2, one_minus_beta2;
  float step_size;  // lr / (1 - beta1^t)
  float eps;
  float bias_correction2_sqrt;  // sqrt(1 - beta2^t)
};

// LayerNorm (layer_norm_kernels.h): what one row's forward returns.
template <class T>
struct RowMoments {
  T mean, rstd;  // rstd = 1 / sqrt(var + eps)
};

}  // namespace tg::cpu
