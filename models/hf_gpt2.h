// GPT-2 in the Hugging Face layout: the directory `from_pretrained` reads and
// `save_pretrained` writes, so tinygpt runs the published GPT-2 weights and
// PyTorch / Hugging Face tools run tinygpt's.
//
//   DIR/config.json        {"model_type": "gpt2", "n_layer": 12, "n_head": 12, "n_embd": 768,
//                           "n_positions": 1024, "vocab_size": 50257,
//                           "layer_norm_epsilon": 1e-5, "activation_function": "gelu_new", ...}
//   DIR/model.safetensors  float32 tensors, with or without a "transformer." prefix:
//     wte.weight (V, C), wpe.weight (n_positions, C),
//     h.{i}.ln_1.{weight,bias} (C), h.{i}.attn.c_attn.weight (C, 3C), .bias (3C),
//     h.{i}.attn.c_proj.weight (C, C), .bias (C), h.{i}.ln_2.{weight,bias} (C),
//     h.{i}.mlp.c_fc.weight (C, 4C), .bias (4C), h.{i}.mlp.c_proj.weight (4C, C), .bias (C),
//     ln_f.{weight,bias} (C); lm_head.weight (V, C) only with "tie_word_embeddings": false
//     (a tied copy of wte.weight is accepted and checked equal).
//
// GPT-2's Conv1D stores weights input-major, (in, out): tinygpt's Linear keeps
// (out, in) as torch.nn.Linear does, so those four weights are transposed on the
// way in and out. Otherwise GPT-2 is tinygpt's `gpt2` preset: learned positions,
// GELU "gelu_new" (tanh; "gelu" is the erf form), biases, tied embeddings.
#pragma once
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "tinygpt/models/gpt.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

// The GPTConfig a Hugging Face config.json describes. Throws tg::Error naming
// `where` and the key when a size is missing or not a positive integer, or when
// it asks for what tinygpt's GPT-2 does not have (another activation, a model
// type other than gpt2, ...).
// Keys Hugging Face reads without effect on the forward pass (dropout rates,
// token ids, generation settings, ...) are ignored; n_positions may be given
// under its old name n_ctx; the dropout of the result is 0 (a training setting).
GPTConfig hf_gpt2_config(const nlohmann::json& config_json, const std::string& where);

// The config.json export_hf_gpt2 writes for `config`: the keys from_pretrained
// needs ("model_type", "architectures", the sizes, both n_positions and n_ctx,
// epsilon, activation, tying, dropout rates, bos/eos 50256 with the 50257-token
// GPT-2 vocabulary) and tinygpt's own config under "tinygpt".
nlohmann::json hf_gpt2_config_json(const GPTConfig& config);

// Loads DIR/config.json and DIR/model.safetensors (memory-mapped: the weights are
// copied once, straight from the mapping into the model). Throws tg::Error
// naming the file and the tensor when a tensor is missing, unexpected, stored
// twice (with and without the prefix), of the wrong shape or dtype (F32, BF16
// or F16, the halves widened exactly to float32), or when config.json disagrees with the weights. Skips the attention
// mask buffers older files carry (h.{i}.attn.bias, h.{i}.attn.masked_bias).
std::unique_ptr<GPT> load_hf_gpt2(const std::string& directory);

// True when DIR holds config.json and model.safetensors.
bool is_hf_gpt2_directory(const std::string& directory);

// Writes `model` to DIR (created if needed) in the layout above: config.json and
// model.safetensors (each atomically; metadata {"format": "pt"}; no
// "transformer." prefix, as in the published GPT-2 files; no lm_head.weight when
// tied, as save_pretrained does), and removes a char_vocabulary.txt (and
// char_special_tokens.json) an earlier export left there (see below). Throws when the model is something GPT-2's
// layout cannot hold: no biases, RoPE or sinusoidal positions, scaled
// embeddings, float64.
void export_hf_gpt2(const GPT& model, const std::string& directory);

// A char-level model's vocabulary has no place in GPT-2's layout, so export
// writes it beside the weights as DIR/char_vocabulary.txt (the characters in id
// order, UTF-8, as CharTokenizer::serialize gives them; atomically), and
// --weights reads it back instead of the GPT-2 BPE. Hugging Face tools ignore it.
// Its special tokens, when it has some (a chat model's "<|im_start|>",
// "<|im_end|>"; ids after the characters), go to DIR/char_special_tokens.json,
// a JSON array of strings in id order; without them, a file an earlier export
// left is removed.
void write_char_vocabulary(const std::string& directory, const tokenizer::CharTokenizer& tokenizer);
// The char-level tokenizer of DIR/char_vocabulary.txt (with its
// char_special_tokens.json, if there), or nothing when there is no such file.
// Throws tokenizer::TokenizerError naming the file that is malformed.
std::optional<tokenizer::TextTokenizer> read_char_vocabulary(const std::string& directory);

}  // namespace tg
