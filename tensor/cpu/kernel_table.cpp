// Compiled twice (tinygpt_kernel_sources, tensor/cpu/CMakeLists.txt): for AVX2,
// where TG_ISA is isa_avx2, and for AVX-512, where it is isa_avx512. Each
// compilation instantiates the kernels in its own namespace and fills that
// namespace's table.
#include "tinygpt/tensor/cpu/kernel_table.h"

#include "tinygpt/tensor/cpu/adamw_kernels.h"
#include "tinygpt/tensor/cpu/attention_kernels.h"
#include "tinygpt/tensor/cpu/cross_entropy_kernels.h"
#include "tinygpt/tensor/cpu/gated_activation_kernels.h"
#include "tinygpt/tensor/cpu/gelu_kernels.h"
#include "tinygpt/tensor/cpu/layer_norm_kernels.h"
#include "tinygpt/tensor/cpu/quantized_kernels.h"
#include "tinygpt/tensor/cpu/rms_norm_kernels.h"
#include "tinygpt/tensor/cpu/rope_kernels.h"

namespace tg::cpu::inline TG_ISA {

namespace {

template <class T>
constexpr FunctionalKernels<T> kernels_of() {
  return {&layer_norm_forward_kernel<T>,    &layer_norm_backward_kernel<T>, &gelu_forward_kernel<T>,
          &gelu_backward_kernel<T>,         &attention_forward_kernel<T>,   &attention_backward_kernel<T>,
          &rope_kernel<T>,                  &cross_entropy_forward_kernel<T>, &cross_entropy_backward_kernel<T>,
          &rms_norm_forward_kernel<T>,      &rms_norm_backward_kernel<T>,   &swiglu_forward_kernel<T>,
          &swiglu_backward_kernel<T>,       &relu_squared_forward_kernel<T>, &relu_squared_backward_kernel<T>};
}

}  // namespace

const KernelTables kKernelTables = {
    kernels_of<float>(),
    kernels_of<double>(),
    {&layer_norm_row<float>, &gelu_in_place, &rope_rotate_row<float>, &attend_one_query, &rms_norm_row<float>,
     &swiglu_row<float>},
    {&adamw_kernel},
    {&dot_int8_rows, &dot_bfloat16_rows, &dequantize_int8_row, &dequantize_int8_row_to_bfloat16,
     &dequantize_bfloat16_row},
};

}  // namespace tg::cpu::TG_ISA
