#include "nn/positional.h"

#include <cmath>

#include "autograd/ops.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

void check_range(const Tensor& table, int64_t length, int64_t offset, const char* op) {
  check(length >= 0 && offset >= 0 && offset + length <= table.size(0), op, ": positions ", offset, " .. ",
        offset + length - 1, " are outside the table of ", table.size(0), " positions (block_size)");
}

}  // namespace

LearnedPositions::LearnedPositions(int64_t block_size, int64_t channels, DType dtype) {
  check(block_size > 0 && channels > 0, "LearnedPositions: sizes must be positive, got ", block_size, " x ", channels);
  weight_ = register_parameter("weight", zeros({block_size, channels}, dtype));
}

Tensor LearnedPositions::forward(int64_t length, int64_t offset) const {
  check_range(weight_, length, offset, "LearnedPositions");
  return narrow(weight_, 0, offset, length);
}

std::string LearnedPositions::describe() const {
  return "LearnedPositions(" + std::to_string(weight_.size(0)) + ", " + std::to_string(weight_.size(1)) + ")";
}

SinusoidalPositions::SinusoidalPositions(int64_t block_size, int64_t channels, DType dtype)
    : table_(sinusoidal_table(block_size, channels, dtype)) {}

Tensor SinusoidalPositions::forward(int64_t length, int64_t offset) const {
  check_range(table_, length, offset, "SinusoidalPositions");
  return raw::narrow(table_, 0, offset, length);
}

std::string SinusoidalPositions::describe() const {
  return "SinusoidalPositions(" + std::to_string(table_.size(0)) + ", " + std::to_string(table_.size(1)) + ")";
}

Tensor sinusoidal_table(int64_t positions, int64_t channels, DType dtype) {
  check(positions > 0 && channels > 0, "sinusoidal_table: sizes must be positive, got ", positions, " x ", channels);
  std::vector<double> values(positions * channels);
  for (int64_t position = 0; position < positions; ++position) {
    for (int64_t channel = 0; channel < channels; ++channel) {
      const int64_t pair = channel / 2;  // channels 2i and 2i+1 share a frequency
      const double angle =
          static_cast<double>(position) / std::pow(10000.0, 2.0 * static_cast<double>(pair) / static_cast<double>(channels));
      values[position * channels + channel] = channel % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return raw::to_dtype(from_vector(values, {positions, channels}), dtype);
}

}  // namespace tg::nn
