// Causal multi-head self-attention: GPT-2's, and with TransformerOptions'
// switches Llama's grouped-query attention.
//
//   x (B, T, C) -> qkv (B, T, (NH + 2 KVH) HD)      one fused Linear
//     -> q (B, NH, T, HD), k, v (B, KVH, T, HD)     views of qkv, no copies (split_heads)
//     -> [QK-norm: RMSNorm over each head's q, k]   (Qwen3, nanochat)
//     -> [RoPE: q, k rotated by position]           nn::rope
//     -> [GQA: each KV head repeated for its NH / KVH query heads]
//     -> y (B, T, NH HD)                            nn::causal_attention (heads merged)
//     -> c_proj (B, T, C) -> dropout                Linear(NH HD, C)
//
// Parameters: qkv.weight ((NH + 2 KVH) HD, C), qkv.bias (unless BiasMode::None),
// [q_norm.weight, k_norm.weight (HD) with QK-norm and norm weights],
// c_proj.weight (C, NH HD), c_proj.bias (BiasMode::All only).
// The rows of qkv.weight are [q; k; v], each in head order. With GPT-2's
// options (KVH = NH, HD = C / NH) that is GPT-2's c_attn, transposed (GPT-2
// stores Conv1D weights (in, out)). Query head h reads KV head h / (NH / KVH),
// as Hugging Face's repeat_kv.
#pragma once
#include <memory>

#include "tinygpt/nn/dropout.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/normalization.h"
#include "tinygpt/nn/transformer_options.h"

namespace tg::nn {

// q (B, NH, T, HD) and k, v (B, KVH, T, HD) of one fused QKV projection.
struct QKVHeads {
  Tensor q, k, v;
};

// qkv (B, T, (NH + 2 KVH) HD) -> q, k, v: viewed as (B, T, NH + 2 KVH, HD), each
// part narrowed and permuted, so they are strided views of qkv, no copies.
// q_norm and k_norm (null without QK-norm) then normalise each head's q and k,
// and with options.rope, q and k are rotated by position position_offset + t
// (nn::rope), which makes them new tensors. Differentiable. The split the module,
// its cached forward and the walk-through all use; the fused decode step reads
// the same layout through raw pointers (models/gpt_decode.cpp).
QKVHeads split_heads(const Tensor& qkv, const TransformerOptions& options, int64_t position_offset,
                     const Normalization* q_norm = nullptr, const Normalization* k_norm = nullptr);

// k or v (B, KVH, T, HD) -> (B, NH, T, HD): each KV head repeated for the
// NH / KVH query heads of its group (a copy; the gradient sums the group's).
// The tensor itself when KVH = NH.
Tensor repeat_kv_heads(const Tensor& kv, int64_t heads);

// The keys and values of the positions seen so far by one layer, for generation.
struct KVCache {
  Tensor keys, values;  // (B, KVH, capacity, HD) each: KVH / NH the size of one for every head
  int64_t length = 0;   // positions filled (also the absolute position of the next one)
};

class CausalSelfAttention : public Module {
 public:
  CausalSelfAttention(const TransformerOptions& options, std::shared_ptr<Generator> dropout_generator);

  // x (B, T, C) -> (B, T, C); query t attends to keys 0..t.
  Tensor forward(const Tensor& x) const;
  // x (B, Tnew, C): the newest positions. Appends their keys and values to the
  // cache and attends over everything in it. Records no graph.
  // (nn/attention_cached.cpp)
  Tensor forward_cached(const Tensor& x, KVCache& cache) const;
  // An empty cache with room for `capacity` positions.
  KVCache make_cache(int64_t batch, int64_t capacity) const;
  // qkv (B, T, (NH + 2 KVH) HD) -> the heads, with this layer's QK-norm and RoPE.
  QKVHeads heads(const Tensor& qkv, int64_t position_offset) const;

  const TransformerOptions& options() const { return options_; }
  const Linear& qkv() const { return *qkv_; }
  const Normalization* q_norm() const { return q_norm_.get(); }  // null without QK-norm
  const Normalization* k_norm() const { return k_norm_.get(); }
  const Linear& c_proj() const { return *c_proj_; }
  std::string describe() const override;

 private:
  void check_input(const Tensor& x) const;

  TransformerOptions options_;
  std::shared_ptr<Linear> qkv_;
  std::shared_ptr<Normalization> q_norm_, k_norm_;
  std::shared_ptr<Linear> c_proj_;
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace tg::nn
