// The two dot products of batch-1 decoding with AVX512-VNNI and AVX512-BF16
// (tensor/cpu/quantized_kernels_avx512_bf16.cpp), the same arguments and results as
// dot_int8_rows and dot_bfloat16_rows in tensor/cpu/quantized_kernels.h. Compiled
// with -mavx512vnni -mavx512bf16 in their own namespace (tensor/runtime/isa.h): call
// them only where the CPU has both (quantized_row_kernels() does).
#pragma once
#include <cstdint>

#include "tinygpt/tensor/cpu/rounded_activations.h"

namespace tg::cpu::isa_avx512_bf16 {

void dot_int8_rows(const int8_t* values, const float* scales, int64_t rows, int64_t cols, const Int8Activations& x,
                   float* out);
void dot_bfloat16_rows(const bfloat16* values, int64_t rows, int64_t cols, const BFloat16Activations& x, float* out);

}  // namespace tg::cpu::isa_avx512_bf16
