// The activations of the modern MLPs, forward then backward (the ops, their
// checks and their reference compositions: nn/functional/swiglu.h and
// nn/functional/relu_squared.h).
//
// SwiGLU (Shazeer 2020; Llama, Qwen): the MLP's first projection makes 2H
// channels per row, the gate g and the value u side by side, and
//
//   x (N, 2H) = [g | u]  ->  y (N, H),   y = silu(g) * u,   silu(g) = g * s,  s = sigmoid(g) = 1 / (1 + exp(-g))
//
//   dg = dy * u * s * (1 + g (1 - s))        (d silu / dg = s + g s (1 - s))
//   du = dy * silu(g)
//
// ReLU squared (So et al. 2021, "Primer"; nanochat, modded-nanogpt):
//
//   x (n) -> y (n),   y = relu(x)^2,   dx = 2 relu(x) dy
#pragma once
#include <cstdint>

#include "tinygpt/tensor/cpu/vector_math.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cpu {
// One copy per instruction set (tensor/runtime/isa.h); callers outside the kernel table get the AVX2 one.
inline namespace TG_ISA {

// Past -g = 88 the exp is clamped (tensor/cpu/vector_math.h); the true sigmoid
// there is below 1e-38 and silu underflows, so s is taken as exactly 0 (a
// select, so the loop still vectorises). NaN stays NaN.
inline constexpr double kSigmoidExpClamp = 88;
template <class T>
inline T sigmoid_of(T g) {
  const T e = exp_fast_clamped(-g, static_cast<T>(kSigmoidExpClamp));
  return -g > static_cast<T>(kSigmoidExpClamp) ? static_cast<T>(0) : static_cast<T>(1) / (static_cast<T>(1) + e);
}

// One row: gate (H), up (H) -> y (H). The kernel under swiglu, and the fused decode step's.
template <class T>
inline void swiglu_row(const T* gate, const T* up, T* y, int64_t hidden) {
#pragma omp simd
  for (int64_t i = 0; i < hidden; ++i) y[i] = gate[i] * sigmoid_of(gate[i]) * up[i];
}

// x (N, 2H) -> y (N, H)
template <class T>
void swiglu_forward_kernel(const T* x, T* y, int64_t rows, int64_t hidden) {
#pragma omp parallel for schedule(static) if (rows * hidden >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) swiglu_row(x + row * 2 * hidden, x + row * 2 * hidden + hidden, y + row * hidden, hidden);
}

// dy (N, H), x (N, 2H) -> dx (N, 2H)
template <class T>
void swiglu_backward_kernel(const T* dy, const T* x, T* dx, int64_t rows, int64_t hidden) {
#pragma omp parallel for schedule(static) if (rows * hidden >= kParallelThreshold)
  for (int64_t row = 0; row < rows; ++row) {
    const T* gate = x + row * 2 * hidden;
    const T* up = gate + hidden;
    const T* dy_row = dy + row * hidden;
    T* dgate = dx + row * 2 * hidden;
    T* dup = dgate + hidden;
#pragma omp simd
    for (int64_t i = 0; i < hidden; ++i) {
      const T s = sigmoid_of(gate[i]);
      dgate[i] = dy_row[i] * up[i] * (s * (static_cast<T>(1) + gate[i] * (static_cast<T>(1) - s)));
      dup[i] = dy_row[i] * (gate[i] * s);
    }
  }
}

// x (n) -> y (n). relu written as a select that keeps NaN (x < 0 is false for NaN).
template <class T>
void relu_squared_forward_kernel(const T* x, T* y, int64_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
  for (int64_t i = 0; i < count; ++i) {
    const T r = x[i] < 0 ? static_cast<T>(0) : x[i];
    y[i] = r * r;
  }
}

// dy (n), x (n) -> dx (n)
template <class T>
void relu_squared_backward_kernel(const T* dy, const T* x, T* dx, int64_t count) {
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
  for (int64_t i = 0; i < count; ++i) {
    const T r = x[i] < 0 ? static_cast<T>(0) : x[i];
    dx[i] = static_cast<T>(2) * r * dy[i];
  }
}

}  // namespace TG_ISA
}  // namespace tg::cpu
