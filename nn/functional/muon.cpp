#include "tinygpt/nn/functional/muon.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/error.h"

namespace tg::nn {

namespace {

// torch.lerp's two formulas (the second where the weight is at least 1/2, for accuracy near 1).
float lerp(float from, float to, float weight) {
  return weight < 0.5f ? from + weight * (to - from) : to - (to - from) * (1.0f - weight);
}

// The three products of one Newton-Schulz step, with float32 or bfloat16 operands:
//   a = x x^T,  b = c a a (+ b a, added by the caller),  next += b x.
class NewtonSchulzProducts {
 public:
  NewtonSchulzProducts(int64_t m, int64_t n, bool bf16) : m_(m), n_(n), bf16_(bf16) {
    if (bf16_) x_.resize(static_cast<size_t>(m * n)), square_.resize(static_cast<size_t>(m * m));
  }
  void gram(const float* x, float* a) {  // a (m, m) = x x^T
    if (!bf16_) return cpu::gemm(false, true, m_, m_, n_, 1.0f, x, n_, x, n_, 0.0f, a, m_);
    cpu::float_to_bfloat16_rows(m_, n_, x, n_, x_.data(), n_);
    cpu::gemm_bf16(false, true, m_, m_, n_, 1.0f, x_.data(), n_, x_.data(), n_, 0.0f, a, m_);
  }
  void square(const float* a, float* b) {  // b (m, m) = c a a
    if (!bf16_) return cpu::gemm(false, false, m_, m_, m_, kNewtonSchulzC, a, m_, a, m_, 0.0f, b, m_);
    cpu::float_to_bfloat16_rows(m_, m_, a, m_, square_.data(), m_);
    cpu::gemm_bf16(false, false, m_, m_, m_, kNewtonSchulzC, square_.data(), m_, square_.data(), m_, 0.0f, b, m_);
  }
  void apply(const float* b, const float* x, float* next) {  // next (m, n) += b x, x as gram() last rounded it
    if (!bf16_) return cpu::gemm(false, false, m_, n_, m_, 1.0f, b, m_, x, n_, 1.0f, next, n_);
    cpu::float_to_bfloat16_rows(m_, m_, b, m_, square_.data(), m_);
    cpu::gemm_bf16(false, false, m_, n_, m_, 1.0f, square_.data(), m_, x_.data(), n_, 1.0f, next, n_);
  }

 private:
  int64_t m_, n_;
  bool bf16_;
  std::vector<bfloat16> x_, square_;  // bfloat16 operands
};

}  // namespace

void orthogonalize(float* matrix, int64_t rows, int64_t cols, int64_t steps, bool bf16_products) {
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
  NewtonSchulzProducts products(m, n, bf16_products);
  for (int64_t step = 0; step < steps; ++step) {
    products.gram(x.data(), a.data());                                      // A = X X^T
    products.square(a.data(), b.data());                                    // c A A
    for (size_t i = 0; i < a.size(); ++i) b[i] += kNewtonSchulzB * a[i];   // + b A
    for (size_t i = 0; i < x.size(); ++i) next[i] = kNewtonSchulzA * x[i];  // a X
    products.apply(b.data(), x.data(), next.data());                       // + B X
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
  orthogonalize(update.data(), rows, cols, hyperparameters.ns_steps, hyperparameters.bf16_products);
  // Python computes the scalars in double; torch rounds them to float in its kernels.
  const double lr = hyperparameters.lr;
  const float decay = static_cast<float>(1.0 - lr * hyperparameters.weight_decay);
  const float shape_scale = static_cast<float>(std::sqrt(std::max(1.0, static_cast<double>(rows) / static_cast<double>(cols))));
  const float step = static_cast<float>(-lr);
  for (int64_t i = 0; i < count; ++i) param[i] = param[i] * decay + step * (update[static_cast<size_t>(i)] * shape_scale);
}

}  // namespace tg::nn
