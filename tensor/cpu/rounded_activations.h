// The int8 block size of quantized weights, and the activations of a one-row
// product rounded as the row kernels (quantized_kernels.h) multiply them: plain
// buffers, so that the kernels need no Tensor (tensor/quantized_matrix.h has the
// weight matrices and the functions that fill these).
#pragma once
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/bfloat16.h"

namespace tg::cpu {

// Columns per scale of an int8 weight row (and of int8 activations).
inline constexpr int64_t kInt8BlockSize = 32;
// How far ahead of its reads a quantized row kernel asks for the weights
// (_mm_prefetch), in both ISAs' copies and the AVX512-BF16 one: why 16 KB is in
// tensor/cpu/quantized_kernels_avx512_bf16.cpp.
inline constexpr int64_t kQuantizedRowPrefetchBytes = 16 * 1024;
// ceil(cols / 32): the scales per row of an int8 matrix.
inline int64_t int8_blocks_per_row(int64_t cols) { return (cols + kInt8BlockSize - 1) / kInt8BlockSize; }

// The activations x (cols) of a one-row product (batch-1 decoding,
// tensor/quantized_matmul.h), rounded once for all the rows to what the row
// kernels (tensor/cpu/quantized_kernels.h) multiply.
//
// For int8 weights: x in int8 blocks of 32, so that the byte products are exact
// in integers and the only errors are the two roundings.
//   X[c] = values[c] * scales[c / 32],  scales[b] = max |x| over block b / 127.
struct Int8Activations {
  std::vector<int8_t> values;       // (cols) in [-127, 127]
  std::vector<uint8_t> magnitudes;  // (cols) |values|, what the kernels multiply
  std::vector<uint64_t> negative;   // (ceil(cols / 64)) bit c % 64 of word c / 64: values[c] < 0
  std::vector<float> scales;        // (ceil(cols / 32))
};

// For bfloat16 weights: x rounded to bfloat16 as the bfloat16 product of many
// rows rounds it (tensor/cpu/gemm_bf16.h), so a weight times an activation is exact
// in float32 and only the sums round.
struct BFloat16Activations {
  std::vector<bfloat16> values;  // (cols)
  std::vector<float> widened;    // (cols) the same numbers in float32
};

// Either, as the weight's format needs (raw::prepare_activations).
struct RoundedActivations {
  Int8Activations int8;
  BFloat16Activations bfloat16;
};

}  // namespace tg::cpu
