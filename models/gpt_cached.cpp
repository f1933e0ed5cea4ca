// The GPT's generation forward: only the newest positions go through the model;
// each layer's attention reads the earlier keys and values from its KV cache.
// Positions are absolute: the new tokens sit at offset = cache length, which
// picks their learned / sinusoidal rows and their RoPE rotation.
#include "autograd/grad_mode.h"
#include "autograd/ops.h"
#include "models/gpt.h"

namespace tg {

std::vector<nn::KVCache> GPT::make_caches(int64_t batch, int64_t capacity) const {
  check(capacity > 0 && capacity <= config_.block_size, "GPT::make_caches: capacity ", capacity,
        " must be in [1, block_size = ", config_.block_size, "]");
  std::vector<nn::KVCache> caches;
  for (const auto& block : blocks_) caches.push_back(block->attn().make_cache(batch, capacity));
  return caches;
}

Tensor GPT::forward_cached(const Tensor& ids, std::vector<nn::KVCache>& caches, LogitPositions positions) {
  check_ids(ids, "GPT::forward_cached");
  check(static_cast<int64_t>(caches.size()) == config_.n_layer, "GPT::forward_cached: ", caches.size(),
        " caches for ", config_.n_layer, " layers; make them with make_caches");
  const int64_t new_positions = ids.size(1), offset = caches.front().length;
  for (const nn::KVCache& cache : caches)
    check(cache.length == offset, "GPT::forward_cached: the layers' caches hold different lengths (", offset, " and ",
          cache.length, ")");
  check(offset + new_positions <= config_.block_size, "GPT::forward_cached: ", offset, " cached + ", new_positions,
        " new positions exceed block_size ", config_.block_size);
  NoGradGuard no_grad;
  Tensor x = embed(ids, offset);  // (B, Tnew, C)
  for (size_t layer = 0; layer < blocks_.size(); ++layer) x = blocks_[layer]->forward_cached(x, caches[layer]);
  return logits(x, positions);  // (B, Tnew or 1, V)
}

}  // namespace tg
