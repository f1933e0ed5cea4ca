#include "tinygpt/nn/embedding.h"

#include "tinygpt/autograd/ops.h"

namespace tg::nn {

Embedding::Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype) {
  check(num_embeddings > 0 && embedding_dim > 0, "Embedding: sizes must be positive, got ", num_embeddings, " x ",
        embedding_dim);
  weight_ = register_parameter("weight", zeros({num_embeddings, embedding_dim}, dtype));
}

Tensor Embedding::forward(const Tensor& ids) const {
  return is_quantized() ? embedding_quantized(quantized_weight(), ids) : embedding(weight_, ids);
}

void Embedding::quantize(DType format, QuantizedValues values) {
  const QuantizedMatrix matrix = quantize_parameter("weight", format, values);
  weight_ = matrix.values;
  weight_scale_ = matrix.scales;
}

std::string Embedding::describe() const {
  return "Embedding(" + std::to_string(weight_.size(0)) + ", " + std::to_string(weight_.size(1)) + ")";
}

}  // namespace tg::nn
