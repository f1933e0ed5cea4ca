// Whole matrices between float32 and bfloat16 (tensor/bfloat16.h), for the
// mixed-precision matrix product (tensor/cpu/gemm_bf16.h): a training step rounds
// its float32 weights and activations to bfloat16 before each product.
//
//   dst (rows, cols) = convert(src (rows, cols))
//
// Rows are src_row_stride and dst_row_stride elements apart (each at least cols).
//
// float32 -> bfloat16 rounds to nearest, ties to even, bit for bit as
// tg::bfloat16 does on every CPU, subnormals included: VCVTNE2PS2BF16 is not
// used because it flushes subnormal inputs to zero. bfloat16 -> float32 is exact.
// Both are plain loops the compiler vectorises (AVX2), split over the OpenMP
// threads above 2^20 elements; memory bandwidth bounds them.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/bfloat16.h"

namespace tg::cpu {

void float_to_bfloat16_rows(int64_t rows, int64_t cols, const float* src, int64_t src_row_stride, bfloat16* dst,
                            int64_t dst_row_stride);
void bfloat16_to_float_rows(int64_t rows, int64_t cols, const bfloat16* src, int64_t src_row_stride, float* dst,
                            int64_t dst_row_stride);

}  // namespace tg::cpu
