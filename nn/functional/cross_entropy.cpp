// Cross-entropy: the op, its checks and its reference composition. The
// kernels, with the formulas: tensor/cpu/cross_entropy_kernels.h.
#include "tinygpt/nn/functional/cross_entropy.h"

#include <cmath>
#include <limits>
#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

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
  Tensor row_stats = Tensor::empty({rows, 2}, logits.dtype());  // each row's max and log_sum
  const double total = visit_floating(logits.dtype(), "cross_entropy", [&]<class T>() {
    return cpu::functional_kernels<T>().cross_entropy_forward(logits_contiguous.data<T>(), targets_contiguous.data<int64_t>(),
                                           row_stats.data<T>(), rows, classes, ignore_index);
  });
  scope.add_bytes_of(logits, targets, row_stats);
  // 0 / 0 = NaN when every target is ignored, as in torch.
  const double loss_value = valid > 0 ? total / static_cast<double>(valid) : std::numeric_limits<double>::quiet_NaN();
  Tensor loss = scalar(loss_value, logits.dtype());
  return record("cross_entropy", {logits}, loss,
                [logits = logits_contiguous.detach(), targets = targets_contiguous, row_stats, valid, rows, classes,
                 ignore_index](const Tensor& dloss, const Needs&) {
                  ProfileScope scope(ProfileFamily::cross_entropy);
                  Tensor dlogits = Tensor::empty(logits.shape(), logits.dtype());
                  visit_floating(logits.dtype(), "cross_entropy backward", [&]<class T>() {
                    const T dloss_per_row = valid > 0 ? dloss.item<T>() / static_cast<T>(valid) : T(0);
                    cpu::functional_kernels<T>().cross_entropy_backward(logits.data<T>(), targets.data<int64_t>(), row_stats.data<T>(),
                                                     dloss_per_row, dlogits.data<T>(), rows, classes, ignore_index);
                  });
                  scope.add_bytes_of(logits, targets, row_stats, dlogits);
                  return Grads{dlogits};
                }, {logits_contiguous});
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
  // No class at all (every target ignored, or count_valid_targets refused): no row has a class 0 to
  // pick. The mean over no valid row is NaN, as the fused op and torch give, with an empty gradient.
  if (classes == 0) return tg::sum(flat_logits) * 0.0 + std::numeric_limits<double>::quiet_NaN();
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
