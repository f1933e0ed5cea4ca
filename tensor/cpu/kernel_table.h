// The fused kernels of nn/functional, one table of entry points per
// instruction set (tensor/runtime/isa.h): kernel_table.cpp is compiled once for AVX2
// and once for AVX-512, each copy filling its own tables, and the ops call
//
//   functional_kernels<T>().layer_norm_forward(x, weight, bias, y, mean, rstd, rows, channels, eps);
//
// which picks the copy for this CPU (TINYGPT_ISA=avx2 forces the AVX2 one).
// The kernels themselves, with their shapes and formulas, are in
// layer_norm_kernels.h, rms_norm_kernels.h, gelu_kernels.h,
// gated_activation_kernels.h, attention_kernels.h, rope_kernels.h,
// cross_entropy_kernels.h and adamw_kernels.h.
#pragma once
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/cpu/adamw_kernels.h"
#include "tinygpt/tensor/cpu/attention_kernels.h"
#include "tinygpt/tensor/cpu/layer_norm_kernels.h"
#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/tensor/cpu/rope_pairing.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/shape.h"

namespace tg::nn {

template <class T>
struct FunctionalKernels {
  void (*layer_norm_forward)(const T* x, const T* weight, const T* bias, T* y, T* mean, T* rstd, int64_t rows,
                             int64_t channels, double eps);
  void (*layer_norm_backward)(const T* dy, const T* x, const T* weight, const T* mean, const T* rstd, T* dx,
                              T* dweight, T* dbias, int64_t rows, int64_t channels);
  void (*gelu_forward)(const T* x, T* y, int64_t count, GeluApproximation approximation);
  void (*gelu_backward)(const T* dy, const T* x, T* dx, int64_t count, GeluApproximation approximation);
  void (*attention_forward)(const HeadRows<T>& q, const HeadRows<T>& k, const HeadRows<T>& v, T* y, T* weights,
                            const AttentionShape& shape);
  void (*attention_backward)(const T* dy, const T* weights, const HeadRows<T>& q, const HeadRows<T>& k,
                             const HeadRows<T>& v, T* dq, T* dk, T* dv, int64_t grad_row_stride,
                             const AttentionShape& shape);
  void (*rope)(const T* x, const Strides& x_strides, T* y, const Shape& shape, const std::vector<T>& cosines,
               const std::vector<T>& sines, T direction, RopePairing pairing);
  double (*cross_entropy_forward)(const T* logits, const int64_t* targets, T* row_stats, int64_t rows,
                                  int64_t classes, int64_t ignore_index);
  void (*cross_entropy_backward)(const T* logits, const int64_t* targets, const T* row_stats, T dloss_per_row,
                                 T* dlogits, int64_t rows, int64_t classes, int64_t ignore_index);
  void (*rms_norm_forward)(const T* x, const T* weight, T* y, T* rstd, int64_t rows, int64_t channels, double eps);
  void (*rms_norm_backward)(const T* dy, const T* x, const T* weight, const T* rstd, T* dx, T* dweight, int64_t rows,
                            int64_t channels);
  void (*swiglu_forward)(const T* x, T* y, int64_t rows, int64_t hidden);
  void (*swiglu_backward)(const T* dy, const T* x, T* dx, int64_t rows, int64_t hidden);
  void (*relu_squared_forward)(const T* x, T* y, int64_t count);
  void (*relu_squared_backward)(const T* dy, const T* x, T* dx, int64_t count);
};

// The one-row pieces of those kernels that the fused decode step
// (models/gpt_decode.cpp) calls itself; taking them from the same copy keeps
// its logits equal to the module-by-module step's, bit for bit.
struct RowKernels {
  RowMoments<float> (*layer_norm_row)(const float* x, const float* weight, const float* bias, float* y,
                                      int64_t channels, double eps);
  void (*gelu_in_place)(float* values, int64_t count, GeluApproximation approximation);
  void (*rope_rotate_row)(const float* x, float* y, const float* cosines, const float* sines, int64_t pairs,
                          float direction, RopePairing pairing);
  void (*attend_one_query)(const float* q, const float* k, const float* v, int64_t keys, int64_t head_size,
                           int64_t k_row_stride, int64_t v_row_stride, float* scores, float* y);
  float (*rms_norm_row)(const float* x, const float* weight, float* y, int64_t channels, double eps);
  void (*swiglu_row)(const float* gate, const float* up, float* y, int64_t hidden);
};

// The optimiser's update loop (float only).
struct OptimizerKernels {
  void (*adamw)(float* param, const float* grad, float* m, float* v, int64_t count, const AdamWScalars& scalars);
};

// One copy's tables: everything kernel_table.cpp compiles for one instruction set.
struct KernelTables {
  FunctionalKernels<float> float_kernels;
  FunctionalKernels<double> double_kernels;
  RowKernels rows;
  OptimizerKernels optimizer;
};
namespace isa_avx2 {
extern const KernelTables kKernelTables;
}
namespace isa_avx512 {
extern const KernelTables kKernelTables;
}

// The tables of instruction set `isa`, or by default of the one in use.
inline const KernelTables& kernel_tables(Isa isa = active_isa()) {
  return isa == Isa::avx512 ? isa_avx512::kKernelTables : isa_avx2::kKernelTables;
}

template <class T>
const FunctionalKernels<T>& functional_kernels(Isa isa = active_isa()) {
  if constexpr (std::is_same_v<T, float>)
    return kernel_tables(isa).float_kernels;
  else
    return kernel_tables(isa).double_kernels;
}
inline const RowKernels& row_kernels(Isa isa = active_isa()) { return kernel_tables(isa).rows; }
inline const OptimizerKernels& optimizer_kernels(Isa isa = active_isa()) { return kernel_tables(isa).optimizer; }

}  // namespace tg::nn
