// The block's feed-forward network, in one of three kinds (TransformerOptions::mlp):
//
//   gelu (GPT-2):   x (B, T, C) -> c_fc (B, T, H)  -> gelu           -> c_proj (B, T, C) -> dropout
//   swiglu (Llama): x (B, T, C) -> c_fc (B, T, 2H) -> swiglu (B, T, H) -> c_proj (B, T, C) -> dropout
//   relu2 (nanochat): x (B, T, C) -> c_fc (B, T, H) -> relu^2        -> c_proj (B, T, C) -> dropout
//
// Parameters: c_fc.weight (H, C) — (2H, C) for swiglu, its rows [gate; up] —,
// c_proj.weight (C, H), and with BiasMode::All their biases. H is 4C for gelu
// and relu2 and 8/3 C rounded up to 64 for swiglu, unless mlp_hidden says.
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
  // c_fc's output (..., H or 2H) -> the activation (..., H): the middle of forward.
  Tensor activation(const Tensor& projected) const;

  MlpKind kind() const { return kind_; }
  const Linear& c_fc() const { return *c_fc_; }
  const Linear& c_proj() const { return *c_proj_; }
  std::string describe() const override;

 private:
  MlpKind kind_;
  std::shared_ptr<Linear> c_fc_;
  std::shared_ptr<GELU> gelu_;  // null unless gelu
  std::shared_ptr<Linear> c_proj_;
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace tg::nn
