// The Llama family in the Hugging Face layout: the directories the Hub
// publishes for LlamaForCausalLM (Llama 2 and 3, TinyLlama, SmolLM2),
// MistralForCausalLM, Qwen2ForCausalLM (Qwen2, Qwen2.5) and Qwen3ForCausalLM,
// read into tinygpt's GPT with the Llama-style block, and written back.
//
//   DIR/config.json   {"architectures": ["LlamaForCausalLM"], "hidden_size": 576,
//                      "intermediate_size": 1536, "num_attention_heads": 9,
//                      "num_key_value_heads": 3, "num_hidden_layers": 30, "rms_norm_eps": 1e-5,
//                      "rope_theta": 100000, "vocab_size": 49152, "tie_word_embeddings": true, ...}
//   DIR/model.safetensors, or shards with model.safetensors.index.json
//   (tensor/io/safetensors_directory.h), in F32, BF16 or F16:
//     model.embed_tokens.weight (V, C)
//     model.layers.{i}.input_layernorm.weight (C)
//     model.layers.{i}.self_attn.q_proj.weight (NH HD, C), k_proj/v_proj.weight (KVH HD, C)
//       [.bias for Qwen2, or with "attention_bias": true]
//     model.layers.{i}.self_attn.q_norm.weight, k_norm.weight (HD)   [Qwen3]
//     model.layers.{i}.self_attn.o_proj.weight (C, NH HD)
//     model.layers.{i}.post_attention_layernorm.weight (C)
//     model.layers.{i}.mlp.gate_proj.weight, up_proj.weight (H, C), down_proj.weight (C, H)
//     model.norm.weight (C); lm_head.weight (V, C) unless "tie_word_embeddings"
//
// tinygpt keeps q, k and v in one Linear (attn.qkv, rows [q; k; v]) and gate
// and up in one (mlp.c_fc, rows [gate; up]): their rows are the published
// matrices stacked, so reading and writing copy row blocks. Hugging Face's
// RoPE rotates the two halves of each head (rope_pairing "half").
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/models/gpt.h"

namespace tg {

// What config.json says beyond the model's shape: which class it was saved
// from, and the token ids generation begins and stops with.
struct HfModelInfo {
  std::string architecture;           // "LlamaForCausalLM", ...
  std::optional<int64_t> bos_token_id;
  std::vector<int64_t> eos_token_ids;  // config.json's eos_token_id: one id or a list
  std::string note;                   // what was adapted on the way in (a sliding window), or ""
};

struct HfLlamaConfig {
  GPTConfig config;
  HfModelInfo info;
};

// The architectures this file reads.
bool is_hf_llama_architecture(const std::string& architecture);

// The GPTConfig a Llama-family config.json describes. Throws tg::Error naming
// `where` and the key for what is missing, malformed or not implemented: an
// unknown architecture, an activation other than SiLU, a rope_scaling type other
// than linear and llama3, a sliding window shorter than the context on a Qwen
// model (use_sliding_window), partial rotary embeddings, biases tinygpt's bias
// modes cannot hold. Mistral's sliding_window shortens the context to the window
// instead (attention within it is the full attention tinygpt computes; info.note says so).
HfLlamaConfig hf_llama_config(const nlohmann::json& config_json, const std::string& where);

// config.json for `config`: the architecture its block is (Qwen3 with QK-norm,
// Qwen2 with q/k/v biases, else Llama), the keys from_pretrained reads, and
// tinygpt's own config under "tinygpt". `torch_dtype` names the stored format.
nlohmann::json hf_llama_config_json(const GPTConfig& config, const HfModelInfo& info, DType stored);

// Loads DIR (config.json and the weights above; memory-mapped, checked tensor by
// tensor, name, shape and dtype, before any is copied). weight_format float32
// converts BF16/F16 to float32; bfloat16 keeps the matrices in bfloat16 (a BF16
// file is copied as is, no float32 copy of a matrix is made) for inference.
struct LoadedHfModel {
  std::unique_ptr<GPT> model;
  HfModelInfo info;
};
LoadedHfModel load_hf_llama(const std::string& directory, DType weight_format = DType::Float32);

// Writes `model` to DIR in the layout above: config.json and model.safetensors
// in `stored` (float32 or bfloat16; atomically). Throws naming what the layout
// cannot hold: GPT-2's block (export_hf_gpt2 writes that), LayerNorm, a MLP
// other than SwiGLU, RMSNorm without weights, interleaved RoPE, learned positions.
void export_hf_llama(const GPT& model, const HfModelInfo& info, const std::string& directory, DType stored);

}  // namespace tg
