#include "tinygpt/nn/positional.h"

#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

void check_range(int64_t table_positions, int64_t length, int64_t offset, const char* op) {
  check(length >= 0 && offset >= 0 && offset <= table_positions && length <= table_positions - offset, op,
        ": positions ", offset, " .. ", offset + length - 1, " are outside the table of ", table_positions,
        " positions (block_size)");
}

}  // namespace

LearnedPositions::LearnedPositions(int64_t block_size, int64_t channels, DType dtype) {
  check(block_size > 0 && channels > 0, "LearnedPositions: sizes must be positive, got ", block_size, " x ", channels);
  weight_ = register_parameter("weight", zeros({block_size, channels}, dtype));
}

Tensor LearnedPositions::forward(int64_t length, int64_t offset) const {
  check_range(weight_.size(0), length, offset, "LearnedPositions");
  if (!is_quantized()) return narrow(weight_, 0, offset, length);
  Tensor rows = Tensor::empty({length, weight_.size(1)}, DType::Float32);  // (length, C)
  dequantize_rows(quantized_weight(), offset, length, rows.data<float>());
  return rows;
}

void LearnedPositions::quantize(DType format, QuantizedValues values) {
  const QuantizedMatrix matrix = quantize_parameter("weight", format, values);
  weight_ = matrix.values;
  weight_scale_ = matrix.scales;
}

std::string LearnedPositions::describe() const {
  return "LearnedPositions(" + std::to_string(weight_.size(0)) + ", " + std::to_string(weight_.size(1)) + ")";
}

SinusoidalPositions::SinusoidalPositions(int64_t block_size, int64_t channels, DType dtype)
    : block_size_(block_size), channels_(channels), dtype_(dtype) {
  check(block_size > 0 && channels > 0, "SinusoidalPositions: sizes must be positive, got ", block_size, " x ",
        channels);
}

Tensor SinusoidalPositions::forward(int64_t length, int64_t offset) const {
  check_range(block_size_, length, offset, "SinusoidalPositions");
  return sinusoidal_table(length, channels_, dtype_, offset);
}

std::string SinusoidalPositions::describe() const {
  return "SinusoidalPositions(" + std::to_string(block_size_) + ", " + std::to_string(channels_) + ")";
}

Tensor sinusoidal_table(int64_t positions, int64_t channels, DType dtype, int64_t first_position) {
  check(positions > 0 && channels > 0 && first_position >= 0, "sinusoidal_table: sizes must be positive, got ",
        positions, " x ", channels, " from position ", first_position);
  std::vector<double> values(checked_mul(positions, channels, "sinusoidal_table"));
  for (int64_t row = 0; row < positions; ++row) {
    const double position = static_cast<double>(first_position + row);
    for (int64_t channel = 0; channel < channels; ++channel) {
      const int64_t pair = channel / 2;  // channels 2i and 2i+1 share a frequency
      const double angle =
          position / std::pow(10000.0, 2.0 * static_cast<double>(pair) / static_cast<double>(channels));
      values[row * channels + channel] = channel % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return raw::to_dtype(from_vector(values, {positions, channels}), dtype);
}

}  // namespace tg::nn
