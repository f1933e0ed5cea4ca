#include "tinygpt/nn/attention.h"

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/rope.h"

namespace tg::nn {

QKVHeads split_heads(const Tensor& qkv, const TransformerOptions& options, int64_t position_offset,
                     const Normalization* q_norm, const Normalization* k_norm) {
  const int64_t heads = options.n_head, kv_heads = options.kv_heads(), head_size = options.head_size();
  check(qkv.dim() == 3 && qkv.size(2) == options.qkv_width(), "split_heads: qkv of shape ", qkv.shape(),
        " must be (B, T, (NH + 2 KVH) HD) = (B, T, ", options.qkv_width(), ")");
  const int64_t batch = qkv.size(0), time = qkv.size(1);
  const Tensor parts = view(qkv, {batch, time, heads + 2 * kv_heads, head_size});  // (B, T, NH + 2 KVH, HD)
  auto part = [&](int64_t first, int64_t count) {  // (B, count, T, HD)
    return permute(narrow(parts, 2, first, count), {0, 2, 1, 3});
  };
  QKVHeads split{part(0, heads), part(heads, kv_heads), part(heads + kv_heads, kv_heads)};
  if (q_norm) split.q = q_norm->forward(split.q);
  if (k_norm) split.k = k_norm->forward(split.k);
  if (options.rope) {
    split.q = rope(split.q, position_offset, options.rotary);
    split.k = rope(split.k, position_offset, options.rotary);
  }
  return split;
}

Tensor repeat_kv_heads(const Tensor& kv, int64_t heads) {
  const int64_t batch = kv.size(0), kv_heads = kv.size(1), time = kv.size(2), head_size = kv.size(3);
  if (kv_heads == heads) return kv;
  const int64_t group = heads / kv_heads;
  const Tensor spread = expand(unsqueeze(kv, 2), {batch, kv_heads, group, time, head_size});  // (B, KVH, G, T, HD)
  return reshape(spread, {batch, heads, time, head_size});                                    // (B, NH, T, HD)
}

CausalSelfAttention::CausalSelfAttention(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator)
    : options_(options) {
  options.validate();
  const int64_t channels = options.n_embd;
  qkv_ = register_module("qkv", std::make_shared<Linear>(channels, options.qkv_width(), options.bias != BiasMode::None,
                                                         options.dtype));
  if (options.qk_norm) {
    TransformerOptions head_norm = options;
    head_norm.norm = NormKind::RMSNorm;  // QK-norm is RMSNorm in every model that has it
    q_norm_ = register_module("q_norm", make_normalization(head_norm, options.head_size()));
    k_norm_ = register_module("k_norm", make_normalization(head_norm, options.head_size()));
  }
  c_proj_ = register_module("c_proj", std::make_shared<Linear>(options.attention_width(), channels,
                                                            options.bias == BiasMode::All, options.dtype));
  dropout_ = register_module("dropout", std::make_shared<Dropout>(options.dropout, std::move(dropout_generator)));
  qkv_->set_profile_role("attn.qkv");
  c_proj_->set_profile_role("attn.c_proj");
}

void CausalSelfAttention::check_input(const Tensor& x) const {
  check(x.dim() == 3 && x.size(2) == options_.n_embd, "CausalSelfAttention: input of shape ", x.shape(),
        " must be (B, T, C) with C = ", options_.n_embd);
}

QKVHeads CausalSelfAttention::heads(const Tensor& qkv, int64_t position_offset) const {
  return split_heads(qkv, options_, position_offset, q_norm_.get(), k_norm_.get());
}

Tensor CausalSelfAttention::forward(const Tensor& x) const {
  check_input(x);
  const Tensor qkv = qkv_->forward(x);  // (B, T, (NH + 2 KVH) HD)
  // Attention's products in the projections' precision: bfloat16 in mixed-precision training.
  const DType products = qkv_->matmul_dtype();
  Tensor merged;  // (B, T, NH HD)
  if (options_.rope || !options_.plain_attention()) {
    const QKVHeads split = heads(qkv, 0);
    merged = causal_attention(split.q, repeat_kv_heads(split.k, options_.n_head),
                              repeat_kv_heads(split.v, options_.n_head), products);
  } else {
    merged = causal_attention_qkv(qkv, options_.n_head, products);  // the heads of split_heads, read in place
  }
  return dropout_->forward(c_proj_->forward(merged));  // (B, T, C)
}

std::string CausalSelfAttention::describe() const {
  std::string text = "CausalSelfAttention(n_embd=" + std::to_string(options_.n_embd) +
                     ", n_head=" + std::to_string(options_.n_head);
  if (options_.kv_heads() != options_.n_head) text += ", n_kv_head=" + std::to_string(options_.kv_heads());
  if (options_.attention_width() != options_.n_embd) text += ", head_dim=" + std::to_string(options_.head_size());
  if (options_.qk_norm) text += ", qk_norm";
  return text + (options_.rope ? ", rope)" : ")");
}

}  // namespace tg::nn
