// The block's feed-forward network, GPT-2's MLP:
//
//   x (B, T, C) -> c_fc (B, T, 4C) -> GELU -> c_proj (B, T, C) -> dropout
//
// Parameters: c_fc.weight (4C, C), c_fc.bias (4C), c_proj.weight (C, 4C), c_proj.bias (C).
#pragma once
#include <memory>

#include "tinygpt/nn/dropout.h"
#include "tinygpt/nn/gelu.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/transformer_options.h"

namespace tg::nn {

class MLP : public Module {
 public:
  MLP(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator);

  Tensor forward(const Tensor& x) const;

  const Linear& c_fc() const { return *c_fc_; }
  const Linear& c_proj() const { return *c_proj_; }
  std::string describe() const override { return "MLP"; }

 private:
  std::shared_ptr<Linear> c_fc_;
  std::shared_ptr<GELU> gelu_;
  std::shared_ptr<Linear> c_proj_;
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace tg::nn
