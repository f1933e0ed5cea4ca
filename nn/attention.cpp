#include "tinygpt/nn/attention.h"

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/rope.h"

namespace tg::nn {

QKVHeads split_heads(const Tensor& qkv, const TransformerOptions& options, int64_t position_offset) {
  check(qkv.dim() == 3 && qkv.size(2) == 3 * options.n_embd, "split_heads: qkv of shape ", qkv.shape(),
        " must be (B, T, 3C) with C = ", options.n_embd);
  const int64_t batch = qkv.size(0), time = qkv.size(1);
  const Tensor parts = view(qkv, {batch, time, 3, options.n_head, options.head_size()});  // (B, T, 3, NH, HS)
  auto part = [&](int64_t index) { return permute(select(parts, 2, index), {0, 2, 1, 3}); };  // (B, NH, T, HS)
  QKVHeads heads{part(0), part(1), part(2)};
  if (options.rope) {
    heads.q = rope(heads.q, position_offset, options.rope_base);
    heads.k = rope(heads.k, position_offset, options.rope_base);
  }
  return heads;
}

CausalSelfAttention::CausalSelfAttention(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator)
    : options_(options) {
  options.validate();
  const int64_t channels = options.n_embd;
  qkv_ = register_module("qkv", std::make_shared<Linear>(channels, 3 * channels, options.bias, options.dtype));
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(channels, channels, options.bias, options.dtype));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, std::move(dropout_generator)));
  qkv_->set_profile_role("attn.qkv");
  c_proj_->set_profile_role("attn.c_proj");
}

void CausalSelfAttention::check_input(const Tensor& x) const {
  check(x.dim() == 3 && x.size(2) == options_.n_embd, "CausalSelfAttention: input of shape ", x.shape(),
        " must be (B, T, C) with C = ", options_.n_embd);
}

Tensor CausalSelfAttention::forward(const Tensor& x) const {
  check_input(x);
  const Tensor qkv = qkv_->forward(x);  // (B, T, 3C)
  Tensor merged;                        // (B, T, C)
  if (options_.rope) {
    const QKVHeads heads = split_heads(qkv, options_, 0);  // (B, NH, T, HS) each, q and k rotated
    merged = causal_attention(heads.q, heads.k, heads.v);
  } else {
    merged = causal_attention_qkv(qkv, options_.n_head);  // the heads of split_heads, read in place
  }
  return dropout_->forward(c_proj_->forward(merged));  // (B, T, C)
}

std::string CausalSelfAttention::describe() const {
  return "CausalSelfAttention(n_embd=" + std::to_string(options_.n_embd) + ", n_head=" + std::to_string(options_.n_head) +
         (options_.rope ? ", rope)" : ")");
}

}  // namespace tg::nn
