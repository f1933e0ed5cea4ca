// Absolute position encodings, added to the token embeddings:
//
//   x (B, T, C) = token_embeddings (B, T, C) + positions(T, offset) (T, C)
//
// - LearnedPositions: GPT-2's wpe, a trained (block_size, C) table.
// - SinusoidalPositions: the fixed table of "Attention Is All You Need" (not a
//   parameter), for position pos and channel pair (2i, 2i+1):
//     PE(pos, 2i) = sin(pos / 10000^(2i/C)),   PE(pos, 2i+1) = cos(pos / 10000^(2i/C))
//
// The third kind, RoPE, is not added here: it rotates queries and keys inside
// attention (nn::rope, nn/functional/rope.h; see nn/attention.h).
//
// `offset` is the absolute position of the first row: 0 in training, the number
// of positions already in the KV cache during generation.
#pragma once
#include "tinygpt/nn/module.h"
#include "tinygpt/tensor/quantized_matrix.h"

namespace tg::nn {

class AbsolutePositions : public Module {
 public:
  // (T, C): the encodings of positions offset .. offset + length - 1.
  virtual Tensor forward(int64_t length, int64_t offset = 0) const = 0;
};

class LearnedPositions : public AbsolutePositions {
 public:
  // The table starts at zero: initialise it with nn/init.h.
  LearnedPositions(int64_t block_size, int64_t channels, DType dtype = DType::Float32);
  // A view of rows offset .. offset + length - 1 (their gradient lands in those rows).
  Tensor forward(int64_t length, int64_t offset = 0) const override;
  const Tensor& weight() const { return weight_; }  // (block_size, C): float32/64, or bfloat16/int8 once quantized
  // For inference (nn/quantize.h): the rows are widened as they are read.
  void quantize(DType format, QuantizedValues values = QuantizedValues::FromWeights);
  bool is_quantized() const { return is_quantized_format(weight_.dtype()); }
  QuantizedMatrix quantized_weight() const { return {weight_, weight_scale_}; }  // when is_quantized()
  std::string describe() const override;

 private:
  Tensor weight_;
  Tensor weight_scale_;  // (block_size, ceil(C / 32)) for an int8 table
};

// The (block_size, C) table is not stored: each forward computes the rows it
// returns, as RoPE computes its angles. So the model's memory does not grow with
// block_size, which a file may declare as large as it likes (a 3 KB checkpoint
// saying 2^40 made the model compute a 32 TB table).
class SinusoidalPositions : public AbsolutePositions {
 public:
  SinusoidalPositions(int64_t block_size, int64_t channels, DType dtype = DType::Float32);
  Tensor forward(int64_t length, int64_t offset = 0) const override;  // (length, C), a constant
  std::string describe() const override;

 private:
  int64_t block_size_, channels_;
  DType dtype_;
};

// Rows first_position .. first_position + positions - 1 of the sinusoidal
// table: (positions, C), computed in double precision.
Tensor sinusoidal_table(int64_t positions, int64_t channels, DType dtype = DType::Float32, int64_t first_position = 0);

}  // namespace tg::nn
