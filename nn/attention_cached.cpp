// The generation path of attention and of a block: the same math as forward(),
// for the newest positions only, with the earlier keys and values read from a
// KV cache. Kept apart so the training forward stays free of inference concerns.
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/attention.h"
#include "tinygpt/nn/block.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

KVCache CausalSelfAttention::make_cache(int64_t batch, int64_t capacity) const {
  check(batch > 0 && capacity > 0, "make_cache: batch and capacity must be positive, got ", batch, " and ", capacity);
  const Shape shape{batch, options_.kv_heads(), capacity, options_.head_size()};  // (B, KVH, capacity, HD)
  return KVCache{Tensor::empty(shape, options_.dtype), Tensor::empty(shape, options_.dtype), 0};
}

Tensor CausalSelfAttention::forward_cached(const Tensor& x, KVCache& cache) const {
  check_input(x);
  check(cache.keys.defined() && cache.values.defined(), "CausalSelfAttention::forward_cached: the cache is empty; make it with make_cache");
  const int64_t batch = x.size(0), new_positions = x.size(1), start = cache.length;
  const int64_t capacity = cache.keys.size(2);
  check(cache.keys.size(0) == batch, "CausalSelfAttention::forward_cached: input of shape ", x.shape(),
        " for a cache of batch ", cache.keys.size(0));
  check(start + new_positions <= capacity, "CausalSelfAttention::forward_cached: ", start, " cached + ", new_positions,
        " new positions exceed the cache capacity ", capacity);
  NoGradGuard no_grad;
  // New positions sit at absolute positions start .. start + Tnew - 1 (RoPE rotates by those).
  const QKVHeads split = heads(qkv_->forward(x), start);  // q (B, NH, Tnew, HD), k, v (B, KVH, Tnew, HD)
  raw::copy_(raw::narrow(cache.keys, 2, start, new_positions), split.k);
  raw::copy_(raw::narrow(cache.values, 2, start, new_positions), split.v);
  cache.length = start + new_positions;
  const Tensor keys = raw::narrow(cache.keys, 2, 0, cache.length);      // (B, KVH, Tk, HD)
  const Tensor values = raw::narrow(cache.values, 2, 0, cache.length);  // (B, KVH, Tk, HD)
  const Tensor merged = causal_attention(split.q, repeat_kv_heads(keys, options_.n_head),
                                         repeat_kv_heads(values, options_.n_head));  // (B, Tnew, NH HD)
  return dropout_->forward(c_proj_->forward(merged));
}

Tensor Block::forward_cached(const Tensor& x, KVCache& cache) const {
  NoGradGuard no_grad;
  const Tensor attended = add(x, attn_->forward_cached(ln_1_->forward(x), cache));  // (B, Tnew, C)
  return mlp_branch(attended);
}

}  // namespace tg::nn
