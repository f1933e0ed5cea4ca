// The GPT's generation forward: only the newest positions go through the model;
// each layer's attention reads the earlier keys and values from its KV cache.
// Positions are absolute: the new tokens sit at offset = cache length, which
// picks their learned / sinusoidal rows and their RoPE rotation.
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/models/gpt.h"

namespace tg {

std::vector<nn::KVCache> GPT::make_caches(int64_t batch, int64_t capacity) const {
  check(capacity > 0 && capacity <= config_.block_size, "GPT::make_caches: capacity ", capacity,
        " must be in [1, block_size = ", config_.block_size, "]");
  std::vector<nn::KVCache> caches;
  for (const auto& block : blocks_) caches.push_back(block->attn().make_cache(batch, capacity));
  return caches;
}

// A model without blocks (a bigram model) has no caches; it has RoPE (GPTConfig::validate),
// so no position is added anywhere and 0 is as good as any.
int64_t GPT::cached_length(const std::vector<nn::KVCache>& caches) { return caches.empty() ? 0 : caches.front().length; }

void GPT::check_cached_step(const Tensor& ids, const std::vector<nn::KVCache>& caches, const char* op) const {
  check_ids(ids, op);
  check(static_cast<int64_t>(caches.size()) == config_.n_layer, op, ": ", caches.size(), " caches for ",
        config_.n_layer, " layers; make them with make_caches");
  const int64_t new_positions = ids.size(1), offset = cached_length(caches);
  for (const nn::KVCache& cache : caches)
    check(cache.length == offset, op, ": the layers' caches hold different lengths (", offset, " and ", cache.length,
          ")");
  check(offset + new_positions <= config_.block_size, op, ": ", offset, " cached + ", new_positions,
        " new positions exceed block_size ", config_.block_size);
}

Tensor GPT::forward_cached(const Tensor& ids, std::vector<nn::KVCache>& caches, LogitPositions positions) {
  check_cached_step(ids, caches, "GPT::forward_cached");
  const int64_t offset = cached_length(caches);
  NoGradGuard no_grad;
  if (fused_decode_ && !caches.empty() && why_not_fused(ids, caches).empty()) return fused_step(ids, caches);  // (1, 1, V)
  Tensor x = embed(ids, offset);  // (B, Tnew, C)
  for (size_t layer = 0; layer < blocks_.size(); ++layer) x = blocks_[layer]->forward_cached(x, caches[layer]);
  return logits(x, positions);  // (B, Tnew or 1, V)
}

}  // namespace tg
