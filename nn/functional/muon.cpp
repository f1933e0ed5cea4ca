#include "tinygpt/nn/functional/muon.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/error.h"

namespace tg::nn {

namespace {

// torch.lerp's two formulas (the second where the weight is at least 1/2, for accuracy near 1).
float lerp(float from, float to, float weight) {
  return weight < 0.5f ? from + weight * (to - from) : to - (to - from) * (1.0f - weight);
}

}  // namespace

void orthogonalize(float* matrix, int64_t rows, int64_t cols, int64_t steps) {
  check(rows > 0 && cols > 0 && steps >= 0, "orthogonalize: needs rows, cols > 0 and steps >= 0, got ", rows, ", ",
        cols, ", ", steps);
  const bool transposed = rows > cols;
  const int64_t m = std::min(rows, cols), n = std::max(rows, cols);  // X is (m, n): the wide way round
  std::vector<float> x(static_cast<size_t>(m * n)), next(x.size()), a(static_cast<size_t>(m * m)), b(a.size());
  double squares = 0;
  for (int64_t i = 0; i < rows * cols; ++i) squares += static_cast<double>(matrix[i]) * matrix[i];
  const float norm = static_cast<float>(std::sqrt(squares)) + 1e-7f;
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      x[static_cast<size_t>(transposed ? c * n + r : r * n + c)] = matrix[r * cols + c] / norm;
  for (int64_t step = 0; step < steps; ++step) {
    cpu::gemm(false, true, m, m, n, 1.0f, x.data(), n, x.data(), n, 0.0f, a.data(), m);  // A = X X^T
    cpu::gemm(false, false, m, m, m, kNewtonSchulzC, a.data(), m, a.data(), m, 0.0f, b.data(), m);  // c A A
    for (size_t i = 0; i < a.size(); ++i) b[i] += kNewtonSchulzB * a[i];                          // + b A
    for (size_t i = 0; i < x.size(); ++i) next[i] = kNewtonSchulzA * x[i];                         // a X
    cpu::gemm(false, false, m, n, m, 1.0f, b.data(), m, x.data(), n, 1.0f, next.data(), n);     // + B X
    std::swap(x, next);
  }
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) matrix[r * cols + c] = x[static_cast<size_t>(transposed ? c * n + r : r * n + c)];
}

void muon_step(float* param, const float* grad, float* momentum_buffer, int64_t rows, int64_t cols,
               const MuonHyperparameters& hyperparameters) {
  check(hyperparameters.momentum >= 0 && hyperparameters.momentum < 1, "muon_step: momentum must be in [0, 1), got ",
        hyperparameters.momentum);
  const float momentum = static_cast<float>(hyperparameters.momentum);
  const float new_share = static_cast<float>(1.0 - hyperparameters.momentum);
  const int64_t count = rows * cols;
  std::vector<float> update(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    momentum_buffer[i] = lerp(momentum_buffer[i], grad[i], new_share);
    update[static_cast<size_t>(i)] = hyperparameters.nesterov ? lerp(grad[i], momentum_buffer[i], momentum)
                                                              : momentum_buffer[i];
  }
  orthogonalize(update.data(), rows, cols, hyperparameters.ns_steps);
  // Python computes the scalars in double; torch rounds them to float in its kernels.
  const double lr = hyperparameters.lr;
  const float decay = static_cast<float>(1.0 - lr * hyperparameters.weight_decay);
  const float shape_scale = static_cast<float>(std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols))));
  const float step = static_cast<float>(-lr);
  for (int64_t i = 0; i < count; ++i) param[i] = param[i] * decay + step * (update[static_cast<size_t>(i)] * shape_scale);
}

}  // namespace tg::nn
