#include "tinygpt/tensor/quantized_matrix.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <limits>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/index.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// One block of numbers -> its int8 values and scale (the return value); a
// block holding inf or NaN gets the scale NaN (and values 0), so products with
// it are NaN, as in float32.
float quantize_int8_block(const float* numbers, int64_t count, int8_t* values) {
  float largest = 0.0f;
  bool finite = true;
  for (int64_t col = 0; col < count; ++col) {
    finite = finite && std::isfinite(numbers[col]);
    largest = std::max(largest, std::abs(numbers[col]));
  }
  if (!finite) {
    std::fill(values, values + count, int8_t{0});
    return std::numeric_limits<float>::quiet_NaN();
  }
  const float scale = largest / 127.0f;
  const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
  for (int64_t col = 0; col < count; ++col)
    values[col] = static_cast<int8_t>(std::clamp(std::nearbyint(numbers[col] * inverse), -127.0f, 127.0f));
  return scale;
}

// The same for a whole block of 32 in AVX2, number for number: the same
// largest |x|, the same float32 multiply, rounded to nearest even as
// nearbyint does. A decode step rounds 49 activation vectors a token this way.
float quantize_full_int8_block(const float* numbers, int8_t* values) {
  static_assert(cpu::kInt8BlockSize == 32);
  const __m256 magnitude_bits = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
  const __m256 infinity = _mm256_set1_ps(std::numeric_limits<float>::infinity());
  __m256 parts[4], largest = _mm256_setzero_ps();
  int finite = 0xff;
  for (int part = 0; part < 4; ++part) {
    parts[part] = _mm256_loadu_ps(numbers + 8 * part);
    const __m256 magnitudes = _mm256_and_ps(parts[part], magnitude_bits);
    largest = _mm256_max_ps(largest, magnitudes);
    finite &= _mm256_movemask_ps(_mm256_cmp_ps(magnitudes, infinity, _CMP_LT_OQ));  // false for inf and NaN
  }
  if (finite != 0xff) return quantize_int8_block(numbers, cpu::kInt8BlockSize, values);
  __m128 four = _mm_max_ps(_mm256_castps256_ps128(largest), _mm256_extractf128_ps(largest, 1));
  four = _mm_max_ps(four, _mm_movehl_ps(four, four));
  const float scale = _mm_cvtss_f32(_mm_max_ss(four, _mm_movehdup_ps(four))) / 127.0f;
  const __m256 inverse = _mm256_set1_ps(scale > 0.0f ? 1.0f / scale : 0.0f);
  __m256i whole[4];
  for (int part = 0; part < 4; ++part) {
    const __m256 rounded = _mm256_round_ps(_mm256_mul_ps(parts[part], inverse), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    whole[part] = _mm256_cvtps_epi32(_mm256_min_ps(_mm256_max_ps(rounded, _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f)));
  }
  // The packs work within 128-bit halves; the permute puts the 8 groups of 4 back in order.
  const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(whole[0], whole[1]), _mm256_packs_epi32(whole[2], whole[3]));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(values),
                      _mm256_permutevar8x32_epi32(bytes, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7)));
  return scale;
}

// One row (cols) of float32 numbers -> int8 values and ceil(cols / 32) scales.
void quantize_int8_row(const float* numbers, int64_t cols, int8_t* values, float* scales) {
  int64_t start = 0, block = 0;
  for (; start + cpu::kInt8BlockSize <= cols; start += cpu::kInt8BlockSize, ++block)
    scales[block] = quantize_full_int8_block(numbers + start, values + start);
  if (start < cols) scales[block] = quantize_int8_block(numbers + start, cols - start, values + start);
}

}  // namespace

void quantize_activations(const float* x, int64_t cols, cpu::Int8Activations& out) {
  out.values.resize(static_cast<size_t>(cols));
  out.magnitudes.resize(static_cast<size_t>(cols));
  out.scales.resize(static_cast<size_t>(cpu::int8_blocks_per_row(cols)));
  quantize_int8_row(x, cols, out.values.data(), out.scales.data());
  out.negative.assign(static_cast<size_t>((cols + 63) / 64), 0);
  int64_t col = 0;
  for (; col + 32 <= cols; col += 32) {  // 32 values at a time: their magnitudes and sign bits
    const __m256i values = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(out.values.data() + col));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(out.magnitudes.data() + col), _mm256_abs_epi8(values));
    out.negative[col / 64] |= uint64_t{static_cast<uint32_t>(_mm256_movemask_epi8(values))} << (col % 64);
  }
  for (; col < cols; ++col) {
    out.magnitudes[col] = static_cast<uint8_t>(std::abs(out.values[col]));
    if (out.values[col] < 0) out.negative[col / 64] |= uint64_t{1} << (col % 64);
  }
}

void round_activations(const float* x, int64_t cols, cpu::BFloat16Activations& out) {
  out.values.resize(static_cast<size_t>(cols));
  out.widened.resize(static_cast<size_t>(cols));
  for (int64_t col = 0; col < cols; ++col) {
    out.values[col] = bfloat16(x[col]);
    out.widened[col] = static_cast<float>(out.values[col]);
  }
}

bool is_quantized_format(DType format) { return format == DType::BFloat16 || format == DType::Int8; }

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
  const int64_t blocks = cpu::int8_blocks_per_row(cols);
  matrix.scales = Tensor::empty({rows, blocks}, DType::Float32);
  int8_t* values = matrix.values.data<int8_t>();
  float* scales = matrix.scales.data<float>();
#pragma omp parallel for schedule(static)
  for (int64_t row = 0; row < rows; ++row)
    quantize_int8_row(weights + row * cols, cols, values + row * cols, scales + row * blocks);
  return matrix;
}

QuantizedMatrix zero_quantized_matrix(int64_t rows, int64_t cols, DType format) {
  check(is_quantized_format(format), "zero_quantized_matrix: the formats are bfloat16 and int8, not ", dtype_name(format));
  QuantizedMatrix matrix;
  matrix.values = zeros({rows, cols}, format);
  if (format == DType::Int8) matrix.scales = zeros({rows, cpu::int8_blocks_per_row(cols)}, DType::Float32);
  return matrix;
}

void dequantize_rows(const QuantizedMatrix& matrix, int64_t first, int64_t count, float* out) {
  const int64_t cols = matrix.cols();
  const cpu::QuantizedRowKernels& kernels = cpu::quantized_row_kernels();
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
  const Shape expected{values.size(0), cpu::int8_blocks_per_row(values.size(1))};
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
