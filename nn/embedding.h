// Embedding: row lookup in a table, as torch.nn.Embedding.
//
//   ids (...) int64 -> (..., C);  weight (V, C)
//
// The backward adds each row's gradient into the table row it came from
// (rows looked up twice get both contributions). The weight starts at zero:
// initialise it with nn/init.h. For inference the table can be kept in bfloat16
// or int8 blocks (quantize(), nn/quantize.h): rows are widened as looked up.
#pragma once
#include "tinygpt/nn/module.h"
#include "tinygpt/tensor/quantized_matrix.h"

namespace tg::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype = DType::Float32);

  Tensor forward(const Tensor& ids) const;

  const Tensor& weight() const { return weight_; }  // (V, C): float32/64, or bfloat16/int8 values once quantized
  void quantize(DType format, QuantizedValues values = QuantizedValues::FromWeights);
  bool is_quantized() const { return is_quantized_format(weight_.dtype()); }
  QuantizedMatrix quantized_weight() const { return {weight_, weight_scale_}; }  // when is_quantized()
  std::string describe() const override;

 private:
  Tensor weight_;
  Tensor weight_scale_;  // (V, ceil(C / 32)) for an int8 table
};

}  // namespace tg::nn
