// Every kernel compiled per instruction set, one table of entry points per
// copy (tensor/runtime/isa.h): kernel_table.cpp is compiled once for AVX2 and
// once for AVX-512, each copy filling its own table, and a caller asks
//
//   functional_kernels<T>().layer_norm_forward(x, weight, bias, y, mean, rstd, rows, channels, eps);
//
// which picks the copy for this CPU (TINYGPT_ISA=avx2 forces the AVX2 one).
// The families: the fused GPT ops of nn/functional and their one-row pieces,
// the optimiser's update, and the quantized rows of batch-1 decoding, whose
// third set (AVX-512 with the AVX512-VNNI and AVX512-BF16 dot products) draws
// from the AVX-512 table. The kernels themselves, with their shapes and
// formulas, are in the *_kernels.h files here; this header needs only their
// argument types (kernel_arguments.h), so that a caller sees no loops.
#pragma once
#include <cstdint>
#include <type_traits>
#include <vector>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/tensor/cpu/kernel_arguments.h"
#include "tinygpt/tensor/cpu/rounded_activations.h"
#include "tinygpt/tensor/cpu/rope_pairing.h"
#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/shape.h"

namespace tg::cpu {
// The copy this file is compiled into is opened inline first, as every kernel
// header opens it, so that naming both copies' tables below does not make it
// an ordinary namespace.
inline namespace TG_ISA {}

template <class T>
struct FunctionalKernels {
  void (*layer_norm_forward)(const T* x, const T* weight, const T* bias, T* y, T* mean, T* rstd, int64_t rows,
                             int64_t channels, double eps);
  void (*layer_norm_backward)(const T* dy, const T* x, const T* weight, const T* mean, const T* rstd, T* dx,
                              T* dweight, T* dbias, int64_t rows, int64_t channels);
  void (*gelu_forward)(const T* x, T* y, int64_t count, nn::GeluApproximation approximation);
  void (*gelu_backward)(const T* dy, const T* x, T* dx, int64_t count, nn::GeluApproximation approximation);
  void (*attention_forward)(const HeadRows<T>& q, const HeadRows<T>& k, const HeadRows<T>& v, T* y, T* weights,
                            const AttentionShape& shape);
  void (*attention_backward)(const T* dy, const T* weights, const HeadRows<T>& q, const HeadRows<T>& k,
                             const HeadRows<T>& v, T* dq, T* dk, T* dv, int64_t grad_row_stride,
                             const AttentionShape& shape);
  void (*rope)(const T* x, const Strides& x_strides, T* y, const Shape& shape, const std::vector<T>& cosines,
               const std::vector<T>& sines, T direction, nn::RopePairing pairing);
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
  void (*gelu_in_place)(float* values, int64_t count, nn::GeluApproximation approximation);
  void (*rope_rotate_row)(const float* x, float* y, const float* cosines, const float* sines, int64_t pairs,
                          float direction, nn::RopePairing pairing);
  void (*attend_one_query)(const float* q, const float* k, const float* v, int64_t keys, int64_t head_size,
                           int64_t k_row_stride, int64_t v_row_stride, float* scores, float* y);
  float (*rms_norm_row)(const float* x, const float* weight, float* y, int64_t channels, double eps);
  void (*swiglu_row)(const float* gate, const float* up, float* y, int64_t hidden);
};

// The optimiser's update loop (float only).
struct OptimizerKernels {
  void (*adamw)(float* param, const float* grad, float* m, float* v, int64_t count, const AdamWScalars& scalars);
};

// The row kernels of batch-1 decoding with bfloat16 and int8 weights
// (quantized_kernels.h), behind tensor/quantized_matmul.h.
struct QuantizedRowKernels {
  void (*dot_int8_rows)(const int8_t* values, const float* scales, int64_t rows, int64_t cols,
                        const Int8Activations& x, float* out);
  void (*dot_bfloat16_rows)(const bfloat16* values, int64_t rows, int64_t cols, const BFloat16Activations& x,
                            float* out);
  void (*dequantize_int8_row)(const int8_t* values, const float* scales, float* out, int64_t cols);
  void (*dequantize_int8_row_to_bfloat16)(const int8_t* values, const float* scales, bfloat16* out, int64_t cols);
  void (*dequantize_bfloat16_row)(const bfloat16* w, float* out, int64_t cols);
};

// One copy's table: everything kernel_table.cpp compiles for one instruction set.
struct KernelTables {
  FunctionalKernels<float> float_kernels;
  FunctionalKernels<double> double_kernels;
  RowKernels rows;
  OptimizerKernels optimizer;
  QuantizedRowKernels quantized_rows;
};
// Both copies' tables, named from any file: the copy a kernel file is compiled
// for is its inline namespace, which these declarations reopen without `inline`.
// (clang's warning; GCC has none.)
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Winline-namespace-reopened-noninline"
#endif
namespace isa_avx2 {
extern const KernelTables kKernelTables;
}
namespace isa_avx512 {
extern const KernelTables kKernelTables;
}
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

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

// The sets of quantized row kernels: the AVX2 copy's, the AVX-512 copy's, and
// the AVX-512 copy's with two dot products that use AVX512-VNNI (VPDPBUSD: 64
// byte products summed into 16 int32 lanes in one instruction) and AVX512-BF16
// (VDPBF16PS: 32 bfloat16 products into 16 float32 sums), which CPUs since
// Cooper Lake and Zen 4 have (quantized_kernels_avx512_bf16.cpp).
enum class QuantizedKernelSet { avx2, avx512, avx512_vnni_bf16 };
// The set in use: by active_isa(), and avx512_vnni_bf16 where the CPU has
// AVX512-VNNI and AVX512-BF16 too (so TINYGPT_ISA=avx2 selects avx2).
QuantizedKernelSet active_quantized_kernel_set();
// Every set this CPU can run, for tests and benchmarks that compare them.
std::vector<QuantizedKernelSet> quantized_kernel_sets_here();
const char* quantized_kernel_set_name(QuantizedKernelSet set);  // "AVX2", "AVX-512", "AVX-512 VNNI+BF16"
const QuantizedRowKernels& quantized_row_kernels(QuantizedKernelSet set = active_quantized_kernel_set());

}  // namespace tg::cpu
