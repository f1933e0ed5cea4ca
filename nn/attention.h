// Causal multi-head self-attention, as in GPT-2.
//
//   x (B, T, C) -> qkv (B, T, 3C)                 one fused Linear(C, 3C)
//     -> view (B, T, 3, NH, HS) -> q, k, v        select + permute: (B, NH, T, HS) views, no copies
//     -> [RoPE: q, k rotated by position]         nn::rope (both steps: split_heads below)
//     -> y (B, T, C)                              nn::causal_attention (heads merged)
//     -> c_proj (B, T, C) -> dropout               Linear(C, C)
//
// Parameters: qkv.weight (3C, C), qkv.bias (3C), c_proj.weight (C, C), c_proj.bias (C).
// The rows of qkv.weight are [q; k; v], each C rows in head order, as GPT-2's c_attn
// (transposed: GPT-2 stores Conv1D weights (in, out)).
#pragma once
#include <memory>

#include "tinygpt/nn/dropout.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/transformer_options.h"

namespace tg::nn {

// q, k, v of one fused QKV projection, (B, NH, T, HS) each.
struct QKVHeads {
  Tensor q, k, v;
};

// qkv (B, T, 3C) -> q, k, v (B, NH, T, HS): viewed as (B, T, 3, NH, HS), each
// third selected and permuted, so they are strided views of qkv, no copies.
// With options.rope, q and k are then rotated by position position_offset + t
// (nn::rope), which makes them new tensors. Differentiable. The split the module,
// its cached forward and the walk-through all use; the fused decode step reads
// the same layout through raw pointers (models/gpt_decode.cpp).
QKVHeads split_heads(const Tensor& qkv, const TransformerOptions& options, int64_t position_offset);

// The keys and values of the positions seen so far by one layer, for generation.
struct KVCache {
  Tensor keys, values;  // (B, NH, capacity, HS) each
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

  const Linear& qkv() const { return *qkv_; }
  const Linear& c_proj() const { return *c_proj_; }
  std::string describe() const override;

 private:
  void check_input(const Tensor& x) const;

  TransformerOptions options_;
  std::shared_ptr<Linear> qkv_, c_proj_;
  std::shared_ptr<Dropout> dropout_;
};

}  // namespace tg::nn
