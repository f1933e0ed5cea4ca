// The fused decode step: one new token of one sequence through the whole GPT
// in a single OpenMP parallel region.
//
// At batch 1 every weight is read once per token for one multiply-add, so a
// step is bound by memory bandwidth (498 MB per token for gpt2 124M). Module by
// module (forward_cached's general path) each weight matrix (49 for gpt2) opens
// its own parallel region, and with OMP_WAIT_POLICY=PASSIVE the idle thread is
// woken from sleep for each one. Here the team (tensor/runtime/team.h) is woken once
// per token and meets at a spinning barrier between phases, four per layer and
// the LM head (49 phases, 48 barriers for gpt2):
//
//   x = embed(token, position)                                   (C)   before the region
//   per block:
//     normed = ln_1(x)                        every thread, its own copy (no barrier needed)
//     per head, heads split over threads (with more threads than heads, or
//     with grouped-query attention, the rows of qkv split over all threads
//     first, then a sync):
//       q, k, v of the head = qkv(normed)'s rows of that head            (3 HD)  no sync
//       QK-norm and RoPE on q, k (if used); k, v into the cache (with
//       grouped-query attention each KV head once, by the thread of its
//       share of the KV heads, then a sync);
//       attended_h = softmax(q k^T / sqrt(HD)) v over positions 0..pos     (HD)  sync
//     x     += c_proj(attended)               rows split, each its own rows (C)   sync
//     normed = ln_2(x)                        every thread
//     hidden = act(c_fc(normed))              rows split: gelu or relu^2 in place; swiglu's
//                                             gate and up rows of the same share   (H)  sync
//     x     += mlp.c_proj(hidden)             rows split                    (C)   sync
//   logits = lm_head(ln_f(x))                 rows split                    (V)
//
// No value is summed across threads, and each row uses the same kernel as the
// general path (gemv_rows, or gemv_rows_quantized for bfloat16 and int8 weights,
// and from the kernel table's copy in use,
// tensor/cpu/kernel_table.h: layer_norm_row, rms_norm_row, gelu, swiglu_row,
// rope_rotate_row, attend_one_query), so the logits equal the general path's
// bit for bit, for any thread count (tests/models/test_gpt_decode.cpp).
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/layer_norm.h"
#include "tinygpt/nn/rms_norm.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/cpu/rope_kernels.h"
#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/quantized_matmul.h"
#include "tinygpt/tensor/runtime/team.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// normed (width) = norm(x (width)): LayerNorm or RMSNorm (the only two kinds, nn/normalization.h).
void normalize_into(const nn::Normalization& norm, const float* x, float* normed, int64_t width) {
  if (const auto* layer_norm = dynamic_cast<const nn::LayerNorm*>(&norm)) {
    cpu::row_kernels().layer_norm_row(x, layer_norm->weight().data<float>(), layer_norm->bias().data<float>(), normed,
                                     width, layer_norm->eps());
    return;
  }
  const auto& rms_norm = dynamic_cast<const nn::RMSNorm&>(norm);
  const float* weight = rms_norm.weight().defined() ? rms_norm.weight().data<float>() : nullptr;
  cpu::row_kernels().rms_norm_row(x, weight, normed, width, rms_norm.eps());
}

// x_rounded = x as the kernels of a bfloat16 or int8 W multiply it (nothing for a float32 W).
void prepare_rows(const QuantizedMatrix& weight, const float* x, cpu::RoundedActivations& x_rounded) {
  if (weight.format() != DType::Float32) raw::prepare_activations(weight, x, x_rounded);
}

// out[r] = W[r] . x (+ b[r]) for rows r in [first, last) of W (out, in):
// float32, or bfloat16 / int8 (tensor/quantized_matmul.h), x_rounded from prepare_rows.
void weight_rows(const QuantizedMatrix& weight, const Tensor& bias, int64_t first, int64_t last, const float* x,
                 const cpu::RoundedActivations& x_rounded, float* out) {
  const int64_t in = weight.cols();
  if (weight.format() == DType::Float32)
    cpu::gemv_rows_serial(last - first, in, 1.0f, weight.values.data<float>() + first * in, in, x, 0.0f, out + first);
  else
    raw::gemv_rows_quantized_serial(weight, first, last, x_rounded, out + first);
  if (bias.defined()) {
    const float* b = bias.data<float>();
    for (int64_t row = first; row < last; ++row) out[row] += b[row];
  }
}

// out[r] = W[r] . x + b[r] for this thread's share of the Linear's rows r. W (out, in).
void linear_share(const Team& team, const nn::Linear& linear, const float* x, cpu::RoundedActivations& x_rounded,
                  float* out) {
  const auto [first, last] = team.share(linear.out_features());
  prepare_rows(linear.quantized_weight(), x, x_rounded);
  weight_rows(linear.quantized_weight(), linear.bias(), first, last, x, x_rounded, out);
}

// qkv (3C) = c_attn(x) for the rows of this thread's heads only: q, k and v of
// heads team.share(NH), the only rows its share of the attention reads, so the
// attention follows without a barrier.
void qkv_of_own_heads(const Team& team, const nn::Linear& qkv_linear, int64_t heads, int64_t head_size,
                      const float* x, cpu::RoundedActivations& x_rounded, float* qkv) {
  const int64_t channels = heads * head_size;
  const auto [first_head, last_head] = team.share(heads);
  prepare_rows(qkv_linear.quantized_weight(), x, x_rounded);
  for (int64_t part = 0; part < 3; ++part)  // q, k, v
    weight_rows(qkv_linear.quantized_weight(), qkv_linear.bias(), part * channels + first_head * head_size,
                part * channels + last_head * head_size, x, x_rounded, qkv);
}

// residual[r] += (W[r] . x + b[r]) for this thread's share: the branch is
// rounded before it is added, as add(x, linear(...)) does. branch is scratch (out).
void add_linear_share(const Team& team, const nn::Linear& linear, const float* x, cpu::RoundedActivations& x_rounded,
                      float* branch, float* residual) {
  linear_share(team, linear, x, x_rounded, branch);
  const auto [first, last] = team.share(linear.weight().size(0));
  for (int64_t row = first; row < last; ++row) residual[row] += branch[row];
}

// One layer's attention for this thread's share of the heads: QK-norm and
// RoPE, the new key and value into the cache at `position`, then the query over
// positions 0..position.
struct AttentionStep {
  const float* qkv;                          // ((NH + 2 KVH) HD): q (NH, HD), k, v (KVH, HD) each
  const nn::CausalSelfAttention& attention;  // its options and QK-norm
  const std::vector<float>& rope_cosines;    // (HD/2), empty without RoPE
  const std::vector<float>& rope_sines;
  nn::KVCache& cache;                        // keys, values (1, KVH, capacity, HD)
  int64_t position;
  float* attended;                           // (NH HD), heads concatenated

  int64_t heads() const { return attention.options().n_head; }
  int64_t kv_heads() const { return attention.options().kv_heads(); }
  int64_t head_size() const { return attention.options().head_size(); }

  // x (HD) -> out (HD): QK-norm (if norm) then RoPE (if used), as split_heads does.
  // The rotation reads its input whole, so the normalised row goes to `normed` (HD), the thread's scratch.
  void turn(const nn::Normalization* norm, const float* x, float* out, float* normed) const {
    const float* source = x;
    if (norm) {
      normalize_into(*norm, x, normed, head_size());
      source = normed;
    }
    if (rope_cosines.empty()) {
      std::copy(source, source + head_size(), out);
      return;
    }
    cpu::row_kernels().rope_rotate_row(source, out, rope_cosines.data(), rope_sines.data(), head_size() / 2, 1.0f,
                                       attention.options().rotary.pairing);
  }

  // Key and value of KV head g into the cache at `position`.
  void cache_kv_head(int64_t g, float* normed) const {
    const int64_t capacity = cache.keys.size(2), hd = head_size();
    const float* k = qkv + (heads() + g) * hd;
    const float* v = qkv + (heads() + kv_heads() + g) * hd;
    turn(attention.k_norm(), k, cache.keys.data<float>() + (g * capacity + position) * hd, normed);
    std::copy(v, v + hd, cache.values.data<float>() + (g * capacity + position) * hd);
  }

  // With as many KV heads as heads each thread caches its own heads' keys and
  // values and attends with no barrier between; with fewer, a KV head serves
  // the heads of several threads, so the keys and values go in first.
  // scores (position + 1), query and normed (HD): this thread's scratch.
  void run(Team& team, std::vector<float>& scores, std::vector<float>& query, std::vector<float>& normed) const {
    const int64_t capacity = cache.keys.size(2), hd = head_size(), group = heads() / kv_heads();
    const auto [first, last] = team.share(heads());
    if (group > 1) {
      const auto [first_kv, last_kv] = team.share(kv_heads());
      for (int64_t g = first_kv; g < last_kv; ++g) cache_kv_head(g, normed.data());
      team.sync();
    }
    for (int64_t head = first; head < last; ++head) {
      const int64_t g = head / group;
      if (group == 1) cache_kv_head(g, normed.data());
      turn(attention.q_norm(), qkv + head * hd, query.data(), normed.data());
      const float* keys = cache.keys.data<float>() + g * capacity * hd;      // (capacity, HD)
      const float* values = cache.values.data<float>() + g * capacity * hd;  // (capacity, HD)
      cpu::row_kernels().attend_one_query(query.data(), keys, values, position + 1, hd, hd, hd, scores.data(),
                                         attended + head * hd);
    }
  }
};

// hidden (H) = act(c_fc(normed)) for this thread's share of the H rows: GELU or
// ReLU^2 on the rows just made, SwiGLU on its gate rows and the matching up rows.
void mlp_share(const Team& team, const nn::MLP& mlp, const float* normed, cpu::RoundedActivations& x_rounded,
               std::vector<float>& projected, float* hidden, nn::GeluApproximation gelu) {
  const int64_t hidden_size = mlp.c_proj().in_features();
  const auto [first, last] = team.share(hidden_size);
  const QuantizedMatrix weight = mlp.c_fc().quantized_weight();
  prepare_rows(weight, normed, x_rounded);
  if (mlp.kind() == nn::MlpKind::SwiGLU) {
    weight_rows(weight, mlp.c_fc().bias(), first, last, normed, x_rounded, projected.data());
    weight_rows(weight, mlp.c_fc().bias(), hidden_size + first, hidden_size + last, normed, x_rounded, projected.data());
    cpu::row_kernels().swiglu_row(projected.data() + first, projected.data() + hidden_size + first, hidden + first,
                                 last - first);
    return;
  }
  weight_rows(weight, mlp.c_fc().bias(), first, last, normed, x_rounded, hidden);
  if (mlp.kind() == nn::MlpKind::Gelu) {
    cpu::row_kernels().gelu_in_place(hidden + first, last - first, gelu);
  } else {
    for (int64_t row = first; row < last; ++row) {
      const float r = hidden[row] < 0 ? 0.0f : hidden[row];
      hidden[row] = r * r;
    }
  }
}

}  // namespace

std::string GPT::why_not_fused(const Tensor& ids, const std::vector<nn::KVCache>& caches) const {
  if (dtype_ != DType::Float32) return "the model is float64 (the fused step is float32)";
  if (lora_) return "the model has LoRA adapters (merge_lora folds them into the weights)";
  if (ids.size(0) != 1 || ids.size(1) != 1)
    return "ids of shape " + shape_str(ids.shape()) + " (the fused step takes one token, (1, 1))";
  if (is_training() && config_.dropout > 0) return "dropout is on (training mode); call eval()";
  const Shape expected{1, config_.kv_heads(), 0, config_.head_size()};  // capacity left open
  for (const nn::KVCache& cache : caches) {
    if (!cache.keys.defined() || !cache.values.defined()) return "a cache is empty; make the caches with make_caches";
    const Shape& shape = cache.keys.shape();
    const bool layout_ok = shape.size() == 4 && shape[0] == 1 && shape[1] == expected[1] && shape[3] == expected[3] &&
                           cache.values.shape() == shape && cache.keys.is_contiguous() &&
                           cache.values.is_contiguous() && cache.keys.dtype() == DType::Float32 &&
                           cache.values.dtype() == DType::Float32;
    if (!layout_ok)
      return "a cache of shape " + shape_str(shape) + " (the fused step needs make_caches(1, capacity): (1, " +
             std::to_string(expected[1]) + ", capacity, " + std::to_string(expected[3]) + "), contiguous float32)";
    if (cache.length >= shape[2]) return "the caches are full (" + std::to_string(shape[2]) + " positions)";
  }
  return "";
}

Tensor GPT::decode_step(const Tensor& ids, std::vector<nn::KVCache>& caches) {
  check_cached_step(ids, caches, "GPT::decode_step");
  const std::string why_not = why_not_fused(ids, caches);
  check(why_not.empty(), "GPT::decode_step: cannot run fused: ", why_not);
  return fused_step(ids, caches);
}

Tensor GPT::fused_step(const Tensor& ids, std::vector<nn::KVCache>& caches) {
  NoGradGuard no_grad;
  const nn::TransformerOptions options = config_.transformer_options();
  const int64_t channels = config_.n_embd, heads = config_.n_head, head_size = options.head_size();
  const int64_t hidden_size = options.hidden_size();
  const int64_t position = caches.front().length;
  std::vector<float> x = raw::contiguous(embed(ids, position)).to_vector<float>();  // (C), the residual stream
  std::vector<float> rope_cosines, rope_sines;  // this position's turn, the same in every layer
  if (config_.positional == PositionalEncoding::Rope)
    cpu::rope_tables(1, position, options.rotary.inverse_frequencies(head_size), rope_cosines, rope_sines);
  std::vector<float> qkv(options.qkv_width()), attended(options.attention_width()), hidden(hidden_size);
  std::vector<float> projected(options.mlp == nn::MlpKind::SwiGLU ? 2 * hidden_size : 0);  // gate and up
  const QuantizedMatrix lm_weight = lm_head_ ? lm_head_->quantized_weight() : wte_->quantized_weight();  // (V, C)
  Tensor logits = Tensor::empty({1, 1, config_.vocab_size}, DType::Float32);
  // GPT-2's layout lets each thread make only its own heads' q, k and v rows.
  const bool own_heads_only = options.plain_attention();

  run_in_team([&](Team& team) {
    // This thread's scratch: its copy of the normalised x, one head's scores, query and QK-normed row, a branch's rows.
    std::vector<float> normed(channels), scores(position + 1), query(head_size), head_normed(head_size), branch(channels);
    cpu::RoundedActivations x_rounded;  // the input of the Linear at hand, rounded (bfloat16 and int8 weights)
    for (size_t layer = 0; layer < blocks_.size(); ++layer) {
      const nn::Block& block = *blocks_[layer];
      normalize_into(block.ln_1(), x.data(), normed.data(), channels);
      if (own_heads_only && team.threads() <= heads) {
        qkv_of_own_heads(team, block.attn().qkv(), heads, head_size, normed.data(), x_rounded, qkv.data());
      } else {  // all threads on the product, then the heads
        linear_share(team, block.attn().qkv(), normed.data(), x_rounded, qkv.data());
        team.sync();
      }
      const AttentionStep attention{qkv.data(), block.attn(), rope_cosines, rope_sines, caches[layer], position,
                                    attended.data()};
      attention.run(team, scores, query, head_normed);
      team.sync();
      add_linear_share(team, block.attn().c_proj(), attended.data(), x_rounded, branch.data(), x.data());
      team.sync();
      normalize_into(block.ln_2(), x.data(), normed.data(), channels);
      mlp_share(team, block.mlp(), normed.data(), x_rounded, projected, hidden.data(), config_.gelu);
      team.sync();
      add_linear_share(team, block.mlp().c_proj(), hidden.data(), x_rounded, branch.data(), x.data());
      team.sync();
    }
    normalize_into(*ln_f_, x.data(), normed.data(), channels);
    const auto [first, last] = team.share(config_.vocab_size);
    prepare_rows(lm_weight, normed.data(), x_rounded);
    weight_rows(lm_weight, Tensor(), first, last, normed.data(), x_rounded, logits.data<float>());
  });
  for (nn::KVCache& cache : caches) cache.length = position + 1;
  return logits;
}

}  // namespace tg
