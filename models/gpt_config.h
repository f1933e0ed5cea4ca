// GPTConfig: the shape and the switches of a GPT, with named presets.
//
// Presets (layers / heads / channels, context):
//   gpt2         12 / 12 /  768, block 1024, vocab 50257   (124M parameters)
//   gpt2-medium  24 / 16 / 1024, block 1024, vocab 50257   (350M)
//   gpt2-large   36 / 20 / 1280, block 1024, vocab 50257   (774M)
//   gpt2-xl      48 / 25 / 1600, block 1024, vocab 50257   (1.56B)
//   cpu-small     4 /  4 /  128, block   64, batch 12      (nanoGPT's "on a laptop CPU" settings)
//   baby          6 /  6 /  384, block  256, batch 64, dropout 0.2   (nanoGPT's shakespeare_char)
// and the Llama-style block (RMSNorm, SwiGLU, rotate-half RoPE, no biases; KV heads after the slash):
//   llama-small   4 / 4/2 /  128, block   64, batch 12     (cpu-small's shape and parameter budget)
//   smollm2-135m 30 / 9/3 /  576, hidden 1536, vocab 49152, theta 1e5, tied      (shapes only:
//   qwen3-0.6b   28 / 16/8 / 1024, head_dim 128, hidden 3072, vocab 151936,        for benchmarks)
//                theta 1e6, QK-norm, tied
//   llama-3.2-1b 16 / 32/8 / 2048, hidden 8192, vocab 128256, theta 5e5, llama3 scaling, tied
// The character-level presets take their vocabulary from the tokenizer; the GPT-2
// shapes default to GPT-2's 50257, the published shapes to theirs, and take the
// tokenizer's when one is given.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/nn/transformer_options.h"

namespace tg {

enum class PositionalEncoding {
  Learned,     // GPT-2: a trained (block_size, C) table added to the token embeddings (wpe)
  Sinusoidal,  // a fixed sin/cos table added instead (no parameters)
  Rope,        // queries and keys rotated by position inside attention (no parameters)
};

const char* positional_encoding_name(PositionalEncoding kind);  // "learned", "sinusoidal", "rope"
PositionalEncoding positional_encoding_named(const std::string& name);

// How the weights start (models/gpt.h says what each draws).
enum class InitScheme {
  Gpt2,           // N(0, 0.02), the residual projections scaled down by sqrt(2 L) (nanoGPT)
  XavierUniform,  // every 2-D weight Xavier-uniform
  XavierNormal,   // every 2-D weight Xavier-normal
};

const char* init_scheme_name(InitScheme scheme);  // "gpt2", "xavier_uniform", "xavier_normal"
InitScheme init_scheme_named(const std::string& name);

struct GPTConfig {
  std::string preset = "cpu-small";  // the preset these values started from (informational)
  int64_t vocab_size = 65;           // V: token ids are in [0, V)
  int64_t block_size = 64;           // the longest sequence the model reads (T <= block_size)
  int64_t n_layer = 4;               // L: transformer blocks
  int64_t n_head = 4;                // NH: attention heads per block
  int64_t n_embd = 128;              // C: channels of the residual stream
  int64_t n_kv_head = 0;             // KVH: key/value heads, dividing NH (grouped-query attention); 0: NH
  int64_t head_dim = 0;              // HD: channels per head; 0: C / NH
  int64_t batch_size = 12;           // B: the training batch size the preset suggests
  double dropout = 0.0;              // on embeddings and each residual branch, training only
  nn::BiasMode bias = nn::BiasMode::All;  // which Linears (and LayerNorms) have biases
  nn::NormKind norm = nn::NormKind::LayerNorm;
  bool norm_weight = true;           // RMSNorm's learnable weight
  double norm_eps = 1e-5;            // of every norm (read from "layer_norm_eps" in older files too)
  nn::MlpKind mlp = nn::MlpKind::Gelu;
  int64_t mlp_hidden = 0;            // H; 0: 4C, or 8/3 C rounded up to 64 for swiglu
  bool qk_norm = false;              // RMSNorm over each head's q and k (Qwen3, nanochat)
  PositionalEncoding positional = PositionalEncoding::Learned;
  nn::GeluApproximation gelu = nn::GeluApproximation::Tanh;  // GPT-2 uses tanh
  bool tie_embeddings = true;        // the LM head reuses the token embedding table (GPT-2)
  InitScheme init = InitScheme::Gpt2;
  bool scale_embeddings = false;     // multiply token embeddings by sqrt(C)
  double rope_base = 10000.0;        // RoPE's theta: theta_i = rope_base^(-2i / HD)
  nn::RopeScaling rope_scaling;      // none, linear:F or llama3:F,low,high,original
  nn::RopePairing rope_pairing = nn::RopePairing::Interleaved;  // Half for Hugging Face's layout

  // The preset `name` (list above); vocab_size > 0 sets V, else the GPT-2 presets
  // use 50257 and the character-level ones throw (they need the tokenizer's).
  // An unknown name throws listing the known ones.
  static GPTConfig preset_named(const std::string& name, int64_t vocab_size = 0);
  // True for the GPT-2 shapes (GPT-2 BPE), false for the character-level presets;
  // an unknown name throws as preset_named does.
  static bool preset_uses_gpt2_vocabulary(const std::string& name);
  // The vocabulary size a preset has of its own (GPT-2's 50257, a published
  // model's), or 0 for the character-level ones, which take the tokenizer's.
  static int64_t preset_vocab_size(const std::string& name);
  static std::vector<std::string> preset_list();
  // The peak learning rate a run from scratch of this preset (or of a preset of this shape) starts with
  // (train's --lr default).
  double preset_learning_rate() const;
  void validate() const;  // throws tg::Error naming the field

  // Closed form (tied embeddings counted once), equal to GPT(config).parameter_count():
  //     V C                      token embeddings (wte)
  //   + block_size C             learned positions only (wpe)
  //   + L (qkv (NH + 2 KVH) HD C, attn c_proj NH HD C, c_fc F H C (F = 2 for swiglu, else 1),
  //        mlp c_proj H C, two norms, QK-norm's 2 HD, and the biases the bias mode keeps)
  //   + one norm                 final norm: C weights, + C biases for LayerNorm with biases
  //   + V C                      untied LM head only (no bias)
  // For GPT-2's block that is L (12 C^2 + 2 C + 11 C b), b = 1 with biases.
  int64_t parameter_count() const;
  int64_t kv_heads() const { return n_kv_head > 0 ? n_kv_head : n_head; }  // KVH
  int64_t head_size() const { return head_dim > 0 ? head_dim : n_embd / n_head; }  // HD

  // The options every block's layers take.
  nn::TransformerOptions transformer_options(DType dtype = DType::Float32) const;

  // JSON is only forward-declared here (json_fwd.hpp), so that models/gpt.h does
  // not pull it in; a caller that reads or writes the value includes <nlohmann/json.hpp>.
  nlohmann::json to_json() const;
  // Needs the five sizes (vocab_size, block_size, n_layer, n_head, n_embd); other
  // missing keys keep their defaults; unknown keys or wrong types throw; validates.
  static GPTConfig from_json(const nlohmann::json& json);
};

}  // namespace tg
