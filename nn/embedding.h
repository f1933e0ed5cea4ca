// Embedding: row lookup in a table, as torch.nn.Embedding.
//
//   ids (...) int64 -> (..., C);  weight (V, C)
//
// The backward adds each row's gradient into the table row it came from
// (rows looked up twice get both contributions). The weight starts at zero:
// initialise it with nn/init.h.
#pragma once
#include "nn/module.h"

namespace tg::nn {

class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t embedding_dim, DType dtype = DType::Float32);

  Tensor forward(const Tensor& ids) const;

  const Tensor& weight() const { return weight_; }  // (V, C)
  std::string describe() const override;

 private:
  Tensor weight_;
};

}  // namespace tg::nn
