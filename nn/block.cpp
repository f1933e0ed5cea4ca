#include "tinygpt/nn/block.h"

#include "tinygpt/autograd/ops.h"

namespace tg::nn {

Block::Block(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator) {
  options.validate();
  ln_1_ = register_module("ln_1", make_normalization(options, options.n_embd));
  attn_ = register_module("attn", std::make_shared<CausalSelfAttention>(options, dropout_generator));
  if (options.mlp == MlpKind::None) return;
  ln_2_ = register_module("ln_2", make_normalization(options, options.n_embd));
  mlp_ = register_module("mlp", std::make_shared<MLP>(options, std::move(dropout_generator)));
}

Tensor Block::mlp_branch(const Tensor& attended) const {
  if (!mlp_) return attended;
  return add(attended, mlp_->forward(ln_2_->forward(attended)));  // (B, T, C)
}

Tensor Block::forward(const Tensor& x) const {
  const Tensor attended = add(x, attn_->forward(ln_1_->forward(x)));  // (B, T, C)
  return mlp_branch(attended);                                         // (B, T, C)
}

}  // namespace tg::nn
