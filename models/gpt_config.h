// GPTConfig: the shape and the switches of a GPT, with named presets.
//
// Presets (layers / heads / channels, context):
//   gpt2         12 / 12 /  768, block 1024, vocab 50257   (124M parameters)
//   gpt2-medium  24 / 16 / 1024, block 1024, vocab 50257   (350M)
//   gpt2-large   36 / 20 / 1280, block 1024, vocab 50257   (774M)
//   gpt2-xl      48 / 25 / 1600, block 1024, vocab 50257   (1.56B)
//   cpu-small     4 /  4 /  128, block   64, batch 12      (nanoGPT's "on a laptop CPU" settings)
//   baby          6 /  6 /  384, block  256, batch 64, dropout 0.2   (nanoGPT's shakespeare_char)
// The character-level presets take their vocabulary from the tokenizer; the GPT-2
// shapes default to GPT-2's 50257 and take the tokenizer's when one is given.
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
  int64_t n_embd = 128;              // C: channels of the residual stream (HS = C / NH)
  int64_t batch_size = 12;           // B: the training batch size the preset suggests
  double dropout = 0.0;              // on embeddings and each residual branch, training only
  bool bias = true;                  // biases in Linears and LayerNorms (GPT-2: yes)
  PositionalEncoding positional = PositionalEncoding::Learned;
  nn::GeluApproximation gelu = nn::GeluApproximation::Tanh;  // GPT-2 uses tanh
  double layer_norm_eps = 1e-5;
  bool tie_embeddings = true;        // the LM head reuses the token embedding table (GPT-2)
  InitScheme init = InitScheme::Gpt2;
  bool scale_embeddings = false;     // multiply token embeddings by sqrt(C)
  double rope_base = 10000.0;        // RoPE's theta_i = rope_base^(-2i / HS)

  // The preset `name` (list above); vocab_size > 0 sets V, else the GPT-2 presets
  // use 50257 and the character-level ones throw (they need the tokenizer's).
  // An unknown name throws listing the known ones.
  static GPTConfig preset_named(const std::string& name, int64_t vocab_size = 0);
  // True for the GPT-2 shapes (GPT-2 BPE), false for the character-level presets;
  // an unknown name throws as preset_named does.
  static bool preset_uses_gpt2_vocabulary(const std::string& name);
  static std::vector<std::string> preset_list();
  // The peak learning rate a run from scratch of this preset (or of a preset of this shape) starts with
  // (train's --lr default).
  double preset_learning_rate() const;
  void validate() const;  // throws tg::Error naming the field

  // Closed form (tied embeddings counted once), equal to GPT(config).parameter_count():
  //     V C                      token embeddings (wte)
  //   + block_size C             learned positions only (wpe)
  //   + L (12 C^2 + 2 C + 11 C b)  per block: qkv 3C^2, attn c_proj C^2, c_fc 4C^2, mlp c_proj 4C^2,
  //                              LayerNorm weights 2C; with biases (b = 1): 3C + C + 4C + C + 2C
  //   + C + C b                  final LayerNorm
  //   + V C                      untied LM head only (no bias)
  int64_t parameter_count() const;

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
