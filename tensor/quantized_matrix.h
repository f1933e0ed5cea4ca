// QuantizedMatrix: a weight matrix (rows, cols), as a Linear layer stores it
// (out, in), kept in fewer bytes than float32 for inference (nn/quantize.h).
//
//   bfloat16  values (rows, cols) bfloat16: each weight rounded to 8 significant
//             bits (tensor/bfloat16.h). 2 bytes a weight.
//   int8      values (rows, cols) int8 and scales (rows, blocks) float32, where
//             each row is cut into blocks of 32 columns (the last may be shorter),
//             blocks = ceil(cols / 32), and
//               weight[r][c] = values[r][c] * scales[r][c / 32],
//               scales[r][b] = max |weight| over the block / 127,
//               values[r][c] = round(weight[r][c] / scales[r][c / 32]) in [-127, 127].
//             One scale per 32 weights, as the Q8_0 blocks of CPU inference
//             engines (ggml's), with the scale in float32: 1.125 bytes a weight.
//
// The sums stay float32. A product (tensor/quantized_matmul.h) multiplies the
// weights with the activations rounded too: to int8 blocks (int8 weights, one
// row) or to bfloat16 (bfloat16 weights; int8 ones of many rows where the CPU
// has AVX512-BF16), else float32 ones.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "tinygpt/tensor/bfloat16.h"
#include "tinygpt/tensor/cpu/rounded_activations.h"
#include "tinygpt/tensor/tensor.h"
#include "tinygpt/tensor/quantized_values.h"

namespace tg {

struct QuantizedMatrix {
  Tensor values;  // (rows, cols) bfloat16 or int8, contiguous
  Tensor scales;  // (rows, ceil(cols / 32)) float32 for int8, else undefined

  DType format() const { return values.dtype(); }
  int64_t rows() const { return values.size(0); }
  int64_t cols() const { return values.size(1); }
};

// x (cols) -> `out`, resized (its buffers are reused from call to call): rounded to int8
// blocks for int8 weights, to bfloat16 for bfloat16 weights (tensor/cpu/rounded_activations.h).
void quantize_activations(const float* x, int64_t cols, cpu::Int8Activations& out);
void round_activations(const float* x, int64_t cols, cpu::BFloat16Activations& out);

// Is `format` one QuantizedMatrix holds (bfloat16 or int8)?
bool is_quantized_format(DType format);

// weight (rows, cols) float32 -> the matrix in `format` (bfloat16 or int8).
QuantizedMatrix quantize_matrix(const Tensor& weight, DType format);

// A (rows, cols) matrix of zeros in `format` (int8: zero scales); its pages
// cost no memory until written (tensor/storage.h's allocate_zeroed).
QuantizedMatrix zero_quantized_matrix(int64_t rows, int64_t cols, DType format);
// The float32 matrix (rows, cols) the quantized one stands for.
Tensor dequantize(const QuantizedMatrix& matrix);
// Rows first .. first + count - 1 as float32 into out (count, cols), contiguous.
void dequantize_rows(const QuantizedMatrix& matrix, int64_t first, int64_t count, float* out);

// The embedding lookup (raw::embedding, tensor/index.h) in a quantized table
// (V, C): ids (...) int64 -> the float32 rows ids.shape + (C,).
Tensor embedding_quantized(const QuantizedMatrix& table, const Tensor& ids);

// Throws tg::Error, naming `what`, unless the values are a contiguous 2-D
// bfloat16 or int8 tensor and, for int8, the scales are a contiguous float32
// (rows, ceil(cols / 32)) tensor of finite, non-negative numbers: what a file
// must hold before its matrix is used.
void check_quantized_matrix(const QuantizedMatrix& matrix, const std::string& what);

}  // namespace tg
