#include "tensor/quantized_matrix.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/index.h"
#include "tensor/quantized_kernels.h"
#include "tensor/view.h"

namespace tg {

namespace {

// One row (cols) of float32 numbers -> int8 values and ceil(cols / 32) scales.
// A block holding inf or NaN gets the scale NaN (and values 0), so products
// with it are NaN, as in float32.
void quantize_int8_row(const float* numbers, int64_t cols, int8_t* values, float* scales) {
  for (int64_t start = 0, block = 0; start < cols; start += kInt8BlockSize, ++block) {
    const int64_t end = std::min(cols, start + kInt8BlockSize);
    float largest = 0.0f;
    bool finite = true;
    for (int64_t col = start; col < end; ++col) {
      finite = finite && std::isfinite(numbers[col]);
      largest = std::max(largest, std::abs(numbers[col]));
    }
    if (!finite) {
      scales[block] = std::numeric_limits<float>::quiet_NaN();
      std::fill(values + start, values + end, int8_t{0});
      continue;
    }
    const float scale = largest / 127.0f;
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
    scales[block] = scale;
    for (int64_t col = start; col < end; ++col)
      values[col] = static_cast<int8_t>(std::clamp(std::nearbyint(numbers[col] * inverse), -127.0f, 127.0f));
  }
}

}  // namespace

void quantize_activations(const float* x, int64_t cols, Int8Activations& out) {
  out.values.resize(static_cast<size_t>(cols));
  out.magnitudes.resize(static_cast<size_t>(cols));
  out.scales.resize(static_cast<size_t>(int8_blocks_per_row(cols)));
  quantize_int8_row(x, cols, out.values.data(), out.scales.data());
  for (int64_t col = 0; col < cols; ++col) out.magnitudes[col] = static_cast<uint8_t>(std::abs(out.values[col]));
}

bool is_quantized_format(DType format) { return format == DType::BFloat16 || format == DType::Int8; }

int64_t int8_blocks_per_row(int64_t cols) { return (cols + kInt8BlockSize - 1) / kInt8BlockSize; }

QuantizedMatrix quantize_matrix(const Tensor& weight, DType format) {
  check(weight.dim() == 2 && weight.dtype() == DType::Float32, "quantize_matrix: needs a float32 matrix, got ",
        dtype_name(weight.dtype()), " of shape ", weight.shape());
  check(is_quantized_format(format), "quantize_matrix: the formats are bfloat16 and int8, not ", dtype_name(format));
  const Tensor source = raw::contiguous(weight);
  const float* weights = source.data<float>();
  const int64_t rows = weight.size(0), cols = weight.size(1);
  for (int64_t index = 0; index < rows * cols; ++index)
    check(std::isfinite(weights[index]), "quantize_matrix: weight ", index / cols, ", ", index % cols, " is ",
          weights[index], "; only finite weights can be quantized");
  QuantizedMatrix matrix;
  matrix.values = Tensor::empty({rows, cols}, format);
  if (format == DType::BFloat16) {
    bfloat16* values = matrix.values.data<bfloat16>();
#pragma omp parallel for schedule(static)
    for (int64_t index = 0; index < rows * cols; ++index) values[index] = bfloat16(weights[index]);
    return matrix;
  }
  const int64_t blocks = int8_blocks_per_row(cols);
  matrix.scales = Tensor::empty({rows, blocks}, DType::Float32);
  int8_t* values = matrix.values.data<int8_t>();
  float* scales = matrix.scales.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < rows; ++row)
    quantize_int8_row(weights + row * cols, cols, values + row * cols, scales + row * blocks);
  return matrix;
}

void dequantize_rows(const QuantizedMatrix& matrix, int64_t first, int64_t count, float* out) {
  const int64_t cols = matrix.cols();
  const QuantizedRowKernels& kernels = quantized_row_kernels();
  if (matrix.format() == DType::BFloat16) {
    const bfloat16* values = matrix.values.data<bfloat16>();
    for (int64_t row = first; row < first + count; ++row)
      kernels.dequantize_bfloat16_row(values + row * cols, out + (row - first) * cols, cols);
    return;
  }
  const int8_t* values = matrix.values.data<int8_t>();
  const float* scales = matrix.scales.data<float>();
  const int64_t blocks = matrix.scales.size(1);
  for (int64_t row = first; row < first + count; ++row)
    kernels.dequantize_int8_row(values + row * cols, scales + row * blocks, out + (row - first) * cols, cols);
}

Tensor dequantize(const QuantizedMatrix& matrix) {
  Tensor out = Tensor::empty({matrix.rows(), matrix.cols()}, DType::Float32);
  dequantize_rows(matrix, 0, matrix.rows(), out.data<float>());
  return out;
}

Tensor embedding_quantized(const QuantizedMatrix& table, const Tensor& ids) {
  // The rows (and their scales) are gathered as they are stored, then widened.
  const auto gathered = [&](const Tensor& stored) {  // (V, D) -> (N, D)
    return raw::contiguous(raw::reshape(raw::embedding(stored, ids), {-1, stored.size(1)}));
  };
  const QuantizedMatrix rows{gathered(table.values), table.scales.defined() ? gathered(table.scales) : Tensor()};
  Shape out_shape = ids.shape();  // ids (...) -> (..., C)
  out_shape.push_back(table.cols());
  return raw::view(dequantize(rows), out_shape);
}

void check_quantized_matrix(const QuantizedMatrix& matrix, const std::string& what) {
  const Tensor& values = matrix.values;
  check(values.defined() && values.dim() == 2 && values.is_contiguous() && is_quantized_format(values.dtype()), what,
        ": a quantized matrix needs 2-D contiguous bfloat16 or int8 values, got ",
        values.defined() ? std::string(dtype_name(values.dtype())) + " of shape " + shape_str(values.shape())
                         : std::string("none"));
  if (values.dtype() == DType::BFloat16) {
    check(!matrix.scales.defined(), what, ": a bfloat16 matrix has no scales");
    return;
  }
  const Shape expected{values.size(0), int8_blocks_per_row(values.size(1))};
  check(matrix.scales.defined(), what, ": an int8 matrix needs its scales, float32 ", expected,
        " (one per block of 32 weights)");
  check(matrix.scales.dtype() == DType::Float32 && matrix.scales.shape() == expected && matrix.scales.is_contiguous(),
        what, ": the scales of an int8 matrix ", values.shape(), " must be float32 ", expected,
        " (one per block of 32 weights), got ", dtype_name(matrix.scales.dtype()), " ", matrix.scales.shape());
  const float* scales = matrix.scales.data<float>();
  for (int64_t index = 0; index < matrix.scales.numel(); ++index)
    check(std::isfinite(scales[index]) && scales[index] >= 0.0f, what, ": scale ", index, " (row ",
          index / expected[1], ", block ", index % expected[1], ") is ", scales[index],
          "; scales are finite and not negative");
}

}  // namespace tg
