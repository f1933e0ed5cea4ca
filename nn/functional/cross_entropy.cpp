// Cross-entropy: forward and backward kernels over rows of logits, and the op.
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
#include "nn/functional/cross_entropy.h"

#include <cmath>
#include <limits>
#include <vector>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "tensor/vector_math.h"
#include "tensor/factory.h"
#include "tensor/profile.h"
#include "tensor/threads.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

// Throws on a target outside [0, V) that is not ignore_index; returns N_valid.
int64_t count_valid_targets(const int64_t* targets, int64_t rows, int64_t classes, int64_t ignore_index) {
  int64_t valid = 0;
  for (int64_t row = 0; row < rows; ++row) {
    if (targets[row] == ignore_index) continue;
    check(targets[row] >= 0 && targets[row] < classes, "cross_entropy: target ", targets[row], " at row ", row,
          " is outside [0, ", classes, ") (and is not ignore_index ", ignore_index, ")");
    ++valid;
  }
  return valid;
}

// logits (N, V), targets (N) -> logsumexp (N); returns the summed loss over valid rows.
// Not raw::log_softmax: only logsumexp is kept, never an (N, V) output, and each
// row sums in float, the loss over rows in double (the policy: tensor/softmax.h).
template <class T>
double cross_entropy_forward_kernel(const T* logits, const int64_t* targets, T* logsumexp, int64_t rows,
                                    int64_t classes, int64_t ignore_index) {
  std::vector<double> row_loss(rows, 0.0);
#pragma omp parallel for schedule(static) if (rows * classes >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const T* logits_row = logits + row * classes;
    T row_max = -std::numeric_limits<T>::infinity();
#pragma omp simd reduction(max : row_max)
    for (int64_t j = 0; j < classes; ++j) row_max = std::max(row_max, logits_row[j]);
    T sum = 0;
#pragma omp simd reduction(+ : sum)
    for (int64_t j = 0; j < classes; ++j) sum += exp_fast(logits_row[j] - row_max);
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
    for (int64_t j = 0; j < classes; ++j) dlogits_row[j] = exp_fast(logits_row[j] - row_logsumexp) * dloss_per_row;
    dlogits_row[targets[row]] -= dloss_per_row;
  }
}

void check_arguments(const Tensor& logits, const Tensor& targets) {
  check(logits.dim() >= 1 && is_floating(logits.dtype()),
        "cross_entropy: logits must be floating with shape (..., V), got ", dtype_name(logits.dtype()), " of shape ",
        logits.shape());
  const Shape rows_shape(logits.shape().begin(), logits.shape().end() - 1);
  check(targets.shape() == rows_shape, "cross_entropy: logits of shape ", logits.shape(), " need targets of shape ",
        rows_shape, ", got ", targets.shape());
  check(targets.dtype() == DType::Int64, "cross_entropy: targets must be int64, got ", dtype_name(targets.dtype()));
}

}  // namespace

Tensor cross_entropy(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
  ProfileScope scope(ProfileFamily::cross_entropy);
  check_arguments(logits, targets);
  const int64_t classes = logits.size(-1);
  const int64_t rows = targets.numel();
  const Tensor logits_contiguous = raw::contiguous(logits);
  // A copy (N ids, small): the caller may refill its batch buffer before backward runs.
  const Tensor targets_contiguous = raw::clone(targets);
  const int64_t valid = count_valid_targets(targets_contiguous.data<int64_t>(), rows, classes, ignore_index);
  Tensor logsumexp = Tensor::empty({rows}, logits.dtype());
  const double total = visit_floating(logits.dtype(), "cross_entropy", [&]<class T>() {
    return cross_entropy_forward_kernel<T>(logits_contiguous.data<T>(), targets_contiguous.data<int64_t>(),
                                           logsumexp.data<T>(), rows, classes, ignore_index);
  });
  scope.add_bytes_of(logits, targets, logsumexp);
  // 0 / 0 = NaN when every target is ignored, as in torch.
  const double loss_value = valid > 0 ? total / static_cast<double>(valid) : std::numeric_limits<double>::quiet_NaN();
  Tensor loss = scalar(loss_value, logits.dtype());
  return record("cross_entropy", {logits}, loss,
                [logits = logits_contiguous.detach(), targets = targets_contiguous, logsumexp, valid, rows, classes,
                 ignore_index](const Tensor& dloss, const Needs&) {
                  ProfileScope scope(ProfileFamily::cross_entropy);
                  Tensor dlogits = Tensor::empty(logits.shape(), logits.dtype());
                  visit_floating(logits.dtype(), "cross_entropy backward", [&]<class T>() {
                    const T dloss_per_row = valid > 0 ? dloss.item<T>() / static_cast<T>(valid) : T(0);
                    cross_entropy_backward_kernel<T>(logits.data<T>(), targets.data<int64_t>(), logsumexp.data<T>(),
                                                     dloss_per_row, dlogits.data<T>(), rows, classes, ignore_index);
                  });
                  scope.add_bytes_of(logits, targets, logsumexp, dlogits);
                  return Grads{dlogits};
                });
}

Tensor cross_entropy_reference(const Tensor& logits, const Tensor& targets, int64_t ignore_index) {
  check_arguments(logits, targets);
  const int64_t classes = logits.size(-1);
  const int64_t rows = targets.numel();
  const Tensor flat_logits = tg::reshape(logits, {rows, classes});  // (N, V)
  // Ignored rows pick class 0 and are then masked out (plain data, not
  // differentiable). Masked, not multiplied by 0: an ignored row's log-probability
  // may be -inf, and with every row ignored the gradient reaching them is 1/0;
  // either way 0 * inf would be NaN where torch and the fused kernel give 0.
  const Tensor targets_contiguous = raw::contiguous(targets);
  Tensor picked_class = Tensor::empty({rows, 1}, DType::Int64);
  Tensor ignored = Tensor::empty({rows, 1}, DType::Bool);
  const int64_t valid = count_valid_targets(targets_contiguous.data<int64_t>(), rows, classes, ignore_index);
  for (int64_t row = 0; row < rows; ++row) {
    const int64_t target = targets_contiguous.data<int64_t>()[row];
    picked_class.data<int64_t>()[row] = target == ignore_index ? 0 : target;
    ignored.data<bool>()[row] = target == ignore_index;
  }
  const Tensor log_probabilities = tg::log_softmax(flat_logits, 1);                   // (N, V)
  const Tensor target_log_probability = tg::gather(log_probabilities, 1, picked_class);  // (N, 1)
  // The mean over valid rows: NaN when there is none (0 / 0), as torch.
  return -tg::sum(tg::masked_fill(target_log_probability, ignored, 0.0)) / static_cast<double>(valid);
}

}  // namespace tg::nn
