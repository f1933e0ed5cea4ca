// Cross-entropy's kernels, forward then backward (the op, its checks and its
// reference composition: nn/functional/cross_entropy.h).
//
// Shapes: N rows, V classes (the vocabulary).
//
// Forward, per row: max_i = max_j logits_ij and log_sum_i = log sum_j exp(logits_ij - max_i)
// (the maximum is subtracted so that exp cannot overflow); loss_i = (max_i - logits_i[t_i]) + log_sum_i.
//
// Backward: d loss / d logits_ij = (softmax_ij - [j == t_i]) * dloss / N_valid for a
// counted row, 0 for an ignored one. softmax_ij = exp((logits_ij - max_i) - log_sum_i) is
// recomputed from the logits (which exist anyway), so the forward saves only two
// numbers per row (N, 2) — never an (N, V) tensor of probabilities.
//
// max_i and log_sum_i stay apart: their sum, logsumexp_i, rounds to max_i once the
// logits are large (at 1e8 in float32, 1e16 in double, log 2 is below max_i's last
// digit), and every probability computed from it was then wrong. logits_ij - max_i is
// exact wherever it matters, so the probabilities keep their precision at any offset.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/cpu/simd.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/cpu/vector_math.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h).
inline namespace TG_ISA {

// logits (N, V), targets (N) -> row_stats (N, 2): each row's max and log_sum; returns
// the summed loss over valid rows.
// The exps' arguments (a logit minus its row's maximum, less log_sum in the
// backward) are never above 0; exp_fast_clamped gives a logit more than 87 below
// the maximum a probability of 1.2e-38 instead of 0, nothing beside the maximum's own 1.
// Not raw::log_softmax: only two numbers a row are kept, never an (N, V) output, and each
// row sums in float, the loss over rows in double (the policy: tensor/softmax.h).
template <class T>
double cross_entropy_forward_kernel(const T* logits, const int64_t* targets, T* row_stats, int64_t rows,
                                    int64_t classes, int64_t ignore_index) {
  std::vector<double> row_loss(rows, 0.0);
#pragma omp parallel for schedule(static) if (rows * classes >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const T* logits_row = logits + row * classes;
    // simd::max_of: a max reduction stays scalar otherwise, one vmaxss after
    // another (about 3x slower over gpt2's logits: docs/performance.md).
    const T row_max = simd::max_of(logits_row, classes);
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < classes; ++j) sum += exp_fast_clamped(logits_row[j] - row_max);
    const T log_sum = std::log(sum);
    row_stats[2 * row] = row_max;
    row_stats[2 * row + 1] = log_sum;
    if (targets[row] != ignore_index) row_loss[row] = (row_max - logits_row[targets[row]]) + log_sum;
  }
  // Summed in row order, in double: the loss does not depend on the thread count.
  double total = 0;
  for (int64_t row = 0; row < rows; ++row) total += row_loss[row];
  return total;
}

// logits (N, V), targets (N), row_stats (N, 2), dloss (scalar) -> dlogits (N, V)
template <class T>
void cross_entropy_backward_kernel(const T* logits, const int64_t* targets, const T* row_stats, T dloss_per_row,
                                   T* dlogits, int64_t rows, int64_t classes, int64_t ignore_index) {
#pragma omp parallel for schedule(static) if (rows * classes >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const T* logits_row = logits + row * classes;
    T* dlogits_row = dlogits + row * classes;
    if (targets[row] == ignore_index) {
      for (int64_t j = 0; j < classes; ++j) dlogits_row[j] = 0;
      continue;
    }
    const T row_max = row_stats[2 * row], log_sum = row_stats[2 * row + 1];
#pragma omp simd
    for (int64_t j = 0; j < classes; ++j)
      dlogits_row[j] = exp_fast_clamped((logits_row[j] - row_max) - log_sum) * dloss_per_row;
    dlogits_row[targets[row]] -= dloss_per_row;
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
