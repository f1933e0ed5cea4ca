// A pre-norm transformer block (GPT-2's, and Llama's with RMSNorm and its MLP):
//
//   x = x + attn(ln_1(x))     x (B, T, C)
//   x = x + mlp(ln_2(x))     (not with MlpKind::None: attention only)
//
// ln_1 and ln_2 are LayerNorm or RMSNorm (TransformerOptions::norm).
// Normalising before each branch, with the residual stream left untouched,
// keeps gradients well-scaled through deep stacks.
#pragma once
#include <memory>

#include "tinygpt/nn/attention.h"
#include "tinygpt/nn/normalization.h"
#include "tinygpt/nn/mlp.h"

namespace tg::nn {

class Block : public Module {
 public:
  Block(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator);

  Tensor forward(const Tensor& x) const;  // (B, T, C) -> (B, T, C)
  // x (B, Tnew, C), the newest positions, with the layer's KV cache (nn/attention_cached.cpp).
  Tensor forward_cached(const Tensor& x, KVCache& cache) const;

  const Normalization& ln_1() const { return *ln_1_; }
  const CausalSelfAttention& attn() const { return *attn_; }
  // ln_2 and mlp: only when has_mlp().
  bool has_mlp() const { return mlp_ != nullptr; }
  const Normalization& ln_2() const { return *ln_2_; }
  const MLP& mlp() const { return *mlp_; }
  std::string describe() const override { return "Block"; }

 private:
  Tensor mlp_branch(const Tensor& attended) const;  // attended + mlp(ln_2(attended)), or attended

  std::shared_ptr<Normalization> ln_1_;
  std::shared_ptr<CausalSelfAttention> attn_;
  std::shared_ptr<Normalization> ln_2_;  // null with MlpKind::None, as mlp_
  std::shared_ptr<MLP> mlp_;
};

}  // namespace tg::nn
