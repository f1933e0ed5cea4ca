// Cross-entropy's kernels, forward then backward (the op, its checks and its
// reference composition: nn/functional/cross_entropy.h).
//
// Shapes: N rows, V classes (the vocabulary).
//
// Forward, per row: logsumexp_i = max_i + log sum_j exp(logits_ij - max_i) (the
// maximum is subtracted so that exp cannot overflow); loss_i = logsumexp_i - logits_i[t_i].
//
// Backward: d loss / d logits_ij = (softmax_ij - [j == t_i]) * dloss / N_valid for a
// counted row, 0 for an ignored one. softmax_ij = exp(logits_ij - logsumexp_i) is
// recomputed from the logits (which exist anyway), so the forward saves only
// logsumexp (N) — never an (N, V) tensor of probabilities.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "tinygpt/tensor/isa.h"
#include "tinygpt/tensor/simd.h"
#include "tinygpt/tensor/threads.h"
#include "tinygpt/tensor/vector_math.h"

namespace tg::nn {
// One copy per instruction set (tensor/isa.h).
inline namespace TG_ISA {

// logits (N, V), targets (N) -> logsumexp (N); returns the summed loss over valid rows.
// The exps' arguments (a logit minus its row's maximum, or its logsumexp in the
// backward) are never above 0; exp_fast_clamped gives a logit more than 87 below
// the maximum a probability of 1.2e-38 instead of 0, nothing beside the maximum's own 1.
// Not raw::log_softmax: only logsumexp is kept, never an (N, V) output, and each
// row sums in float, the loss over rows in double (the policy: tensor/softmax.h).
template <class T>
double cross_entropy_forward_kernel(const T* logits, const int64_t* targets, T* logsumexp, int64_t rows,
                                    int64_t classes, int64_t ignore_index) {
  std::vector<double> row_loss(rows, 0.0);
#pragma omp parallel for schedule(static) if (rows * classes >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const T* logits_row = logits + row * classes;
    // simd::max_of: a max reduction stays scalar otherwise, one vmaxss after
    // another (gpt2's forward over 2048 x 50257 logits took 38 ms, not 13).
    const T row_max = simd::max_of(logits_row, classes);
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < classes; ++j) sum += exp_fast_clamped(logits_row[j] - row_max);
    logsumexp[row] = row_max + std::log(sum);
    if (targets[row] != ignore_index) row_loss[row] = logsumexp[row] - logits_row[targets[row]];
  }
  // Summed in row order, in double: the loss does not depend on the thread count.
  double total = 0;
  for (int64_t row = 0; row < rows; ++row) total += row_loss[row];
  return total;
}

// logits (N, V), targets (N), logsumexp (N), dloss (scalar) -> dlogits (N, V)
template <class T>
void cross_entropy_backward_kernel(const T* logits, const int64_t* targets, const T* logsumexp, T dloss_per_row,
                                   T* dlogits, int64_t rows, int64_t classes, int64_t ignore_index) {
#pragma omp parallel for schedule(static) if (rows * classes >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const T* logits_row = logits + row * classes;
    T* dlogits_row = dlogits + row * classes;
    if (targets[row] == ignore_index) {
      for (int64_t j = 0; j < classes; ++j) dlogits_row[j] = 0;
      continue;
    }
    const T row_logsumexp = logsumexp[row];
#pragma omp simd
    for (int64_t j = 0; j < classes; ++j)
      dlogits_row[j] = exp_fast_clamped(logits_row[j] - row_logsumexp) * dloss_per_row;
    dlogits_row[targets[row]] -= dloss_per_row;
  }
}

}  // namespace TG_ISA
}  // namespace tg::nn
