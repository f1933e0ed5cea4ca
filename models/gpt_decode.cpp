// The fused decode step: one new token of each of B sequences (B = 1 for
// sample and chat, more for a server's concurrent requests) through the whole
// GPT in a single OpenMP parallel region.
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
// With B sequences every phase does the same for each of them, and each weight
// row is read from memory once per step, not B times: a float32 row is shared
// from registers by three sequences at a time (cpu::gemv_rows_serial_batch), a
// bfloat16 or int8 tile of rows (64 KB, kTileBytes) from the L2 cache by all B.
// Each sequence has its own caches and position; the attention reads only its own.
//
// No value is summed across threads or sequences, and each row uses the same kernel as the
// general path (gemv_rows, or gemv_rows_quantized for bfloat16 and int8 weights,
// and from the kernel table's copy in use,
// tensor/cpu/kernel_table.h: layer_norm_row, rms_norm_row, gelu, swiglu_row,
// rope_rotate_row, attend_one_query), so the logits equal the general path's
// bit for bit, for any thread count and any B (tests/models/test_gpt_decode.cpp).
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/layer_norm.h"
#include "tinygpt/nn/rms_norm.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/cpu/rope_kernels.h"
#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/factory.h"
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

// Rows of a bfloat16 or int8 weight matrix multiplied by one sequence at a time,
// before the next sequence takes the same rows: a tile this size stays in the
// core's L2 cache, so with B sequences it is read from memory once and from the
// cache B - 1 times. (float32 rows go to cpu::gemv_rows_serial_batch, which
// shares each row from registers.)
constexpr int64_t kTileBytes = 64 * 1024;

// The inputs of one weight matrix for every sequence of the step: rows of `width`, and each rounded as the
// kernels of a bfloat16 or int8 weight multiply it (nothing for a float32 one).
struct Inputs {
  const float* rows;  // (B, width)
  int64_t width;
  std::vector<cpu::RoundedActivations>& rounded;  // (B), this thread's
  int64_t count() const { return static_cast<int64_t>(rounded.size()); }
  const float* row(int64_t b) const { return rows + b * width; }

  void prepare(const QuantizedMatrix& weight) const {
    if (weight.format() == DType::Float32) return;
    for (int64_t b = 0; b < count(); ++b) raw::prepare_activations(weight, row(b), rounded[b]);
  }
};

// out[b][r] = W[r] . x_b (+ bias[r]) for rows r in [first, last) of W (out, in) and every sequence b; out rows
// `out_width` apart. float32, or bfloat16 / int8 (tensor/quantized_matmul.h), each row's sums as batch-1
// decoding makes them, so the values do not depend on B. `inputs` prepared for W.
void weight_rows(const QuantizedMatrix& weight, const Tensor& bias, int64_t first, int64_t last, const Inputs& inputs,
                 float* out, int64_t out_width) {
  const int64_t in = weight.cols(), batch = inputs.count();
  if (weight.format() == DType::Float32) {
    std::vector<const float*> rows(batch);
    std::vector<float*> outs(batch);
    for (int64_t b = 0; b < batch; ++b) {
      rows[b] = inputs.row(b);
      outs[b] = out + b * out_width + first;
    }
    cpu::gemv_rows_serial_batch(last - first, in, weight.values.data<float>() + first * in, in, rows.data(),
                                outs.data(), batch);
  } else {
    const int64_t bytes_per_row = in * static_cast<int64_t>(dtype_size(weight.format()));
    const int64_t tile = std::max<int64_t>(1, kTileBytes / std::max<int64_t>(1, bytes_per_row));
    for (int64_t tile_first = first; tile_first < last; tile_first += tile) {
      const int64_t tile_last = std::min(last, tile_first + tile);
      for (int64_t b = 0; b < batch; ++b)
        raw::gemv_rows_quantized_serial(weight, tile_first, tile_last, inputs.rounded[b],
                                        out + b * out_width + tile_first);
    }
  }
  if (bias.defined()) {
    const float* bias_values = bias.data<float>();
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t row = first; row < last; ++row) out[b * out_width + row] += bias_values[row];
  }
}

// out[b] (out_features) = W . x_b + b for this thread's share of the Linear's rows, every sequence b.
void linear_share(const Team& team, const nn::Linear& linear, const Inputs& inputs, float* out) {
  const auto [first, last] = team.share(linear.out_features());
  inputs.prepare(linear.quantized_weight());
  weight_rows(linear.quantized_weight(), linear.bias(), first, last, inputs, out, linear.out_features());
}

// qkv (B, 3C) = c_attn(x) for the rows of this thread's heads only: q, k and v of
// heads team.share(NH), the only rows its share of the attention reads, so the
// attention follows without a barrier.
void qkv_of_own_heads(const Team& team, const nn::Linear& qkv_linear, int64_t heads, int64_t head_size,
                      const Inputs& inputs, float* qkv) {
  const int64_t channels = heads * head_size;
  const auto [first_head, last_head] = team.share(heads);
  inputs.prepare(qkv_linear.quantized_weight());
  for (int64_t part = 0; part < 3; ++part)  // q, k, v
    weight_rows(qkv_linear.quantized_weight(), qkv_linear.bias(), part * channels + first_head * head_size,
                part * channels + last_head * head_size, inputs, qkv, 3 * channels);
}

// residual[b][r] += (W[r] . x_b + b[r]) for this thread's share: the branch is
// rounded before it is added, as add(x, linear(...)) does. branch is scratch (B, out).
void add_linear_share(const Team& team, const nn::Linear& linear, const Inputs& inputs, float* branch,
                      float* residual) {
  linear_share(team, linear, inputs, branch);
  const int64_t width = linear.out_features();
  const auto [first, last] = team.share(width);
  for (int64_t b = 0; b < inputs.count(); ++b)
    for (int64_t row = first; row < last; ++row) residual[b * width + row] += branch[b * width + row];
}

// One layer's attention of one sequence for this thread's share of the heads:
// QK-norm and RoPE, the new key and value into the cache at `position`, then the
// query over positions 0..position.
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
  int64_t group() const { return heads() / kv_heads(); }

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

  // With fewer KV heads than heads, a KV head serves the heads of several
  // threads: its key and value go into the cache first (by the thread of its
  // share of the KV heads), and a sync follows before attend_own_heads.
  void cache_shared_kv_heads(const Team& team, float* normed) const {
    if (group() == 1) return;
    const auto [first_kv, last_kv] = team.share(kv_heads());
    for (int64_t g = first_kv; g < last_kv; ++g) cache_kv_head(g, normed);
  }

  // With as many KV heads as heads each thread caches its own heads' keys and
  // values itself, with no barrier before. scores (position + 1), query and
  // normed (HD): this thread's scratch.
  void attend_own_heads(const Team& team, float* scores, float* query, float* normed) const {
    const int64_t capacity = cache.keys.size(2), hd = head_size();
    const auto [first, last] = team.share(heads());
    for (int64_t head = first; head < last; ++head) {
      const int64_t g = head / group();
      if (group() == 1) cache_kv_head(g, normed);
      turn(attention.q_norm(), qkv + head * hd, query, normed);
      const float* keys = cache.keys.data<float>() + g * capacity * hd;      // (capacity, HD)
      const float* values = cache.values.data<float>() + g * capacity * hd;  // (capacity, HD)
      cpu::row_kernels().attend_one_query(query, keys, values, position + 1, hd, hd, hd, scores,
                                         attended + head * hd);
    }
  }
};

// hidden[b] (H) = act(c_fc(normed_b)) for this thread's share of the H rows: GELU or
// ReLU^2 on the rows just made, SwiGLU on its gate rows and the matching up rows.
// projected (B, 2H) is scratch for SwiGLU.
void mlp_share(const Team& team, const nn::MLP& mlp, const Inputs& normed, float* projected, float* hidden,
               nn::GeluApproximation gelu) {
  const int64_t hidden_size = mlp.c_proj().in_features();
  const auto [first, last] = team.share(hidden_size);
  const QuantizedMatrix weight = mlp.c_fc().quantized_weight();
  normed.prepare(weight);
  if (mlp.kind() == nn::MlpKind::SwiGLU) {
    weight_rows(weight, mlp.c_fc().bias(), first, last, normed, projected, 2 * hidden_size);
    weight_rows(weight, mlp.c_fc().bias(), hidden_size + first, hidden_size + last, normed, projected,
                2 * hidden_size);
    for (int64_t b = 0; b < normed.count(); ++b) {
      const float* projected_b = projected + b * 2 * hidden_size;
      cpu::row_kernels().swiglu_row(projected_b + first, projected_b + hidden_size + first,
                                   hidden + b * hidden_size + first, last - first);
    }
    return;
  }
  weight_rows(weight, mlp.c_fc().bias(), first, last, normed, hidden, hidden_size);
  for (int64_t b = 0; b < normed.count(); ++b) {
    float* hidden_b = hidden + b * hidden_size;
    if (mlp.kind() == nn::MlpKind::Gelu) {
      cpu::row_kernels().gelu_in_place(hidden_b + first, last - first, gelu);
    } else {
      for (int64_t row = first; row < last; ++row) {
        const float r = hidden_b[row] < 0 ? 0.0f : hidden_b[row];
        hidden_b[row] = r * r;
      }
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
  const std::vector<int64_t> id = raw::contiguous(ids).to_vector<int64_t>();
  return raw::reshape(fused_steps(id, {&caches}), {1, 1, config_.vocab_size});
}

Tensor GPT::decode_batch(const std::vector<int64_t>& ids, const std::vector<std::vector<nn::KVCache>*>& caches) {
  check(!ids.empty() && ids.size() == caches.size(), "GPT::decode_batch: ", ids.size(), " ids for ", caches.size(),
        " sequences' caches; give one id per sequence, at least one");
  bool fused = fused_decode_;
  for (size_t b = 0; b < ids.size(); ++b) {
    const Tensor id = from_vector(std::vector<int64_t>{ids[b]}, {1, 1});
    check_cached_step(id, *caches[b], "GPT::decode_batch");
    fused = fused && !caches[b]->empty() && why_not_fused(id, *caches[b]).empty();
  }
  if (fused) return fused_steps(ids, caches);
  const int64_t batch = static_cast<int64_t>(ids.size());
  Tensor logits = Tensor::empty({batch, config_.vocab_size}, DType::Float32);
  for (int64_t b = 0; b < batch; ++b) {
    const Tensor row = forward_cached(from_vector(std::vector<int64_t>{ids[b]}, {1, 1}), *caches[b]);  // (1, 1, V)
    raw::copy_(raw::select(logits, 0, b), raw::to_dtype(raw::reshape(row, {config_.vocab_size}), DType::Float32));
  }
  return logits;
}

Tensor GPT::fused_steps(const std::vector<int64_t>& ids, const std::vector<std::vector<nn::KVCache>*>& caches) {
  NoGradGuard no_grad;
  const nn::TransformerOptions options = config_.transformer_options();
  const int64_t batch = static_cast<int64_t>(ids.size());
  const int64_t channels = config_.n_embd, heads = config_.n_head, head_size = options.head_size();
  const int64_t hidden_size = options.hidden_size(), vocab_size = config_.vocab_size;
  const int64_t qkv_width = options.qkv_width(), attention_width = options.attention_width();
  std::vector<int64_t> positions(batch);
  std::vector<float> x(batch * channels);  // (B, C), the residual streams
  std::vector<std::vector<float>> rope_cosines(batch), rope_sines(batch);  // each position's turn, the same in every layer
  int64_t longest = 0;
  for (int64_t b = 0; b < batch; ++b) {
    positions[b] = caches[b]->front().length;
    longest = std::max(longest, positions[b] + 1);
    const Tensor embedded = raw::contiguous(embed(from_vector(std::vector<int64_t>{ids[b]}, {1, 1}), positions[b]));
    std::copy(embedded.data<float>(), embedded.data<float>() + channels, x.data() + b * channels);
    if (config_.positional == PositionalEncoding::Rope)
      cpu::rope_tables(1, positions[b], options.rotary.inverse_frequencies(head_size), rope_cosines[b], rope_sines[b]);
  }
  std::vector<float> qkv(batch * qkv_width), attended(batch * attention_width), hidden(batch * hidden_size);
  std::vector<float> projected(options.mlp == nn::MlpKind::SwiGLU ? batch * 2 * hidden_size : 0);  // gate and up
  const QuantizedMatrix lm_weight = lm_head_ ? lm_head_->quantized_weight() : wte_->quantized_weight();  // (V, C)
  Tensor logits = Tensor::empty({batch, vocab_size}, DType::Float32);
  // GPT-2's layout lets each thread make only its own heads' q, k and v rows.
  const bool own_heads_only = options.plain_attention();

  run_in_team([&](Team& team) {
    // This thread's scratch: its copy of the normalised rows, one head's scores, query and QK-normed row,
    // a branch's rows, the rounded inputs of the Linear at hand (bfloat16 and int8 weights).
    std::vector<float> normed(batch * channels), scores(longest), query(head_size), head_normed(head_size);
    std::vector<float> branch(batch * channels);
    std::vector<cpu::RoundedActivations> rounded(batch);
    const Inputs normed_rows{normed.data(), channels, rounded};
    const auto normalize_all = [&](const nn::Normalization& norm) {
      for (int64_t b = 0; b < batch; ++b)
        normalize_into(norm, x.data() + b * channels, normed.data() + b * channels, channels);
    };
    for (size_t layer = 0; layer < blocks_.size(); ++layer) {
      const nn::Block& block = *blocks_[layer];
      normalize_all(block.ln_1());
      if (own_heads_only && team.threads() <= heads) {
        qkv_of_own_heads(team, block.attn().qkv(), heads, head_size, normed_rows, qkv.data());
      } else {  // all threads on the product, then the heads
        linear_share(team, block.attn().qkv(), normed_rows, qkv.data());
        team.sync();
      }
      std::vector<AttentionStep> attention;
      for (int64_t b = 0; b < batch; ++b)
        attention.push_back({qkv.data() + b * qkv_width, block.attn(), rope_cosines[b], rope_sines[b],
                             (*caches[b])[layer], positions[b], attended.data() + b * attention_width});
      if (attention.front().group() > 1) {
        for (const AttentionStep& step : attention) step.cache_shared_kv_heads(team, head_normed.data());
        team.sync();
      }
      for (const AttentionStep& step : attention)
        step.attend_own_heads(team, scores.data(), query.data(), head_normed.data());
      team.sync();
      add_linear_share(team, block.attn().c_proj(), Inputs{attended.data(), attention_width, rounded}, branch.data(),
                       x.data());
      team.sync();
      if (!block.has_mlp()) continue;
      normalize_all(block.ln_2());
      mlp_share(team, block.mlp(), normed_rows, projected.data(), hidden.data(), config_.gelu);
      team.sync();
      add_linear_share(team, block.mlp().c_proj(), Inputs{hidden.data(), hidden_size, rounded}, branch.data(),
                       x.data());
      team.sync();
    }
    normalize_all(*ln_f_);
    const auto [first, last] = team.share(vocab_size);
    normed_rows.prepare(lm_weight);
    weight_rows(lm_weight, Tensor(), first, last, normed_rows, logits.data<float>(), vocab_size);
  });
  for (int64_t b = 0; b < batch; ++b)
    for (nn::KVCache& cache : *caches[b]) cache.length = positions[b] + 1;
  return logits;
}

}  // namespace tg
