// The sizes and switches shared by the layers of a transformer block
// (attention, MLP, block); models/ fills them from a GPTConfig.
//
// GPT-2's block is the default. The switches of the Llama-style block that
// small open models (Llama 2 and 3, Mistral, Qwen 2 and 3, SmolLM) and nanochat
// use: RMSNorm, a SwiGLU or ReLU^2 MLP, grouped-query attention with fewer KV
// heads, a head size of its own, QK-norm, rotate-half RoPE with a base and a
// rescaling, and biases on q, k, v only.
#pragma once
#include <cstdint>

#include "tinygpt/nn/functional/rope_frequencies.h"
#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/tensor/dtype.h"

namespace tg::nn {

enum class NormKind {
  LayerNorm,  // GPT-2: (x - mean) / std * weight + bias
  RMSNorm,    // Llama: x / rms * weight
};

enum class MlpKind {
  Gelu,    // GPT-2: c_proj(gelu(c_fc x)), hidden 4C
  SwiGLU,  // Llama: c_proj(silu(gate x) * up x), c_fc's rows [gate; up], hidden 8/3 C rounded up to 64
  ReLU2,   // nanochat: c_proj(relu(c_fc x)^2), hidden 4C
  None,    // no MLP and no ln_2: attention only (the course's one- and multi-head chapters, docs/course/)
};

enum class BiasMode {
  All,   // every Linear and LayerNorm (GPT-2)
  None,  // none (Llama, Qwen3, nanochat)
  Qkv,   // the q, k, v projection only (Qwen2)
};

const char* norm_kind_name(NormKind kind);  // "layernorm", "rmsnorm"
const char* mlp_kind_name(MlpKind kind);    // "gelu", "swiglu", "relu2", "none"
const char* bias_mode_name(BiasMode mode);  // "all", "none", "qkv"
NormKind norm_kind_named(const std::string& name);  // throws naming the known ones
MlpKind mlp_kind_named(const std::string& name);
BiasMode bias_mode_named(const std::string& name);

struct TransformerOptions {
  int64_t n_embd = 128;          // C
  int64_t n_head = 4;            // NH: query heads
  int64_t n_kv_head = 0;         // KVH: key and value heads, dividing NH (1: multi-query); 0: NH
  int64_t head_dim = 0;          // HD: channels per head; 0: C / NH (which must then divide)
  NormKind norm = NormKind::LayerNorm;
  bool norm_weight = true;       // RMSNorm's learnable weight (nanochat has none)
  double norm_eps = 1e-5;
  MlpKind mlp = MlpKind::Gelu;
  int64_t mlp_hidden = 0;        // H; 0: the kind's default (MlpKind above); 0 for none
  BiasMode bias = BiasMode::All;
  bool qk_norm = false;          // RMSNorm over each head's q and k before the rotation (Qwen3, nanochat)
  double dropout = 0.0;          // on each residual branch's output (training mode only)
  GeluApproximation gelu = GeluApproximation::Tanh;
  bool rope = false;             // rotate q and k by position (RoPE) inside attention
  Rotary rotary;                 // its base, rescaling and pairing
  DType dtype = DType::Float32;  // float64 for gradient checks

  // Positive sizes, NH % KVH == 0, a head size (C % NH == 0 unless head_dim is
  // given), even with RoPE, 0 <= dropout < 1, a weight-free norm only for RMSNorm.
  void validate() const;
  int64_t head_size() const { return head_dim > 0 ? head_dim : n_embd / n_head; }  // HD
  int64_t kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }          // KVH
  // The widths, checked for overflow (sizes come from files): they throw tg::Error past int64.
  int64_t attention_width() const;  // NH * HD: c_proj's input
  int64_t qkv_width() const;        // (NH + 2 KVH) * HD: qkv's output
  int64_t hidden_size() const;      // H (0 when mlp is none)
  // GPT-2's attention: as many KV heads as heads, HD = C / NH, no QK-norm
  // (the fused (B, T, 3C) attention and the fused decode step's layout).
  bool plain_attention() const { return kv_heads() == n_head && attention_width() == n_embd && !qk_norm; }
};

}  // namespace tg::nn
