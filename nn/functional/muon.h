// One Muon update of a weight matrix (Jordan et al. 2024, "Muon: MomentUm
// Orthogonalized by Newton-Schulz"), with the float operations of the reference
// implementation (KellerJordan/Muon, muon_update), so the two agree to rounding:
//
//   buf = lerp(buf, g, 1 - momentum)             buf = momentum buf + (1 - momentum) g
//   u   = lerp(g, buf, momentum)                 Nesterov (without it: u = buf)
//   O   = orthogonalize(u)                       ~ U V^T of u's SVD U S V^T
//   p   = p (1 - lr weight_decay) - lr sqrt(max(1, rows / cols)) O
//
// orthogonalize runs `steps` iterations of the quintic Newton-Schulz map with
// the coefficients (a, b, c) = (3.4445, -4.7750, 2.0315), on X = u / (|u|_F + 1e-7),
// the wide way round (X is u, or u^T when u has more rows than columns):
//
//   A = X X^T          (m, m), m = min(rows, cols)
//   B = b A + c A A
//   X = a X + B X
//
// The coefficients push every singular value of X towards the interval
// [0.7, 1.2] in five steps, rather than to exactly 1: the update only needs
// every direction at a similar size, and steeper coefficients converge in
// fewer matrix products. The products are cpu::gemm's (OpenBLAS) in float32,
// or, as the reference runs them, with bfloat16 operands (cpu::gemm_bf16, float32
// sums; X, A and B themselves stay float32): the choice of a --dtype bf16 run,
// twice the products a second where the CPU has AVX512-BF16.
#pragma once
#include <cstdint>

namespace tg::nn {

// As Python holds them (doubles); the kernel rounds each derived scalar to float, as torch does.
struct MuonHyperparameters {
  double lr;
  double momentum;
  double weight_decay;
  int64_t ns_steps;
  bool nesterov;
  bool bf16_products;  // the Newton-Schulz products' operands rounded to bfloat16
};

inline constexpr float kNewtonSchulzA = 3.4445f, kNewtonSchulzB = -4.7750f, kNewtonSchulzC = 2.0315f;

// matrix (rows, cols), row-major: replaced by the Newton-Schulz approximation of
// its orthogonal factor. Single-threaded products when called inside an OpenMP
// parallel region (the OpenMP build of OpenBLAS), threaded otherwise.
void orthogonalize(float* matrix, int64_t rows, int64_t cols, int64_t steps, bool bf16_products = false);

// The update above of one (rows, cols) block: param and grad in the arena,
// momentum_buffer its own (zero before the first step). grad is only read.
void muon_step(float* param, const float* grad, float* momentum_buffer, int64_t rows, int64_t cols,
               const MuonHyperparameters& hyperparameters);

}  // namespace tg::nn
