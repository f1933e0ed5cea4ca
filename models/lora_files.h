// LoRA adapters on disk, in Hugging Face PEFT's layout, so PEFT's
// PeftModel.from_pretrained and llama.cpp's convert_lora_to_gguf.py read what
// tinygpt trains, and tinygpt applies what PEFT trained:
//
//   DIR/adapter_model.safetensors   float32 (read: F32, BF16, F16), metadata {"format": "pt"}
//     base_model.model.<module path>.lora_A.weight   (r, in)
//     base_model.model.<module path>.lora_B.weight   (out, r)
//     module paths as models/lora_config.h gives them: model.layers.0.self_attn.q_proj,
//     transformer.h.0.attn.c_attn, ...
//   DIR/adapter_config.json         PEFT's LoraConfig: "peft_type": "LORA", "r", "lora_alpha",
//     "lora_dropout", "target_modules", "bias": "none", "fan_in_fan_out" (true for GPT-2's
//     Conv1D layout), "base_model_name_or_path", and the rest at PEFT's defaults
//
// The update applied is (lora_alpha / r) B A, PEFT's default scaling; adapters
// PEFT writes with options tinygpt does not apply (rsLoRA's alpha / sqrt(r),
// DoRA, per-module ranks, trained biases or extra modules) are refused by name
// rather than applied differently.
#pragma once
#include <string>

#include "tinygpt/models/gpt.h"
#include "tinygpt/models/lora_config.h"

namespace tg {

inline constexpr const char* kAdapterWeightsFile = "adapter_model.safetensors";
inline constexpr const char* kAdapterConfigFile = "adapter_config.json";

// Writes the model's adapters (it must have some) to DIR, each file atomically.
// base_model: what the adapters were trained on, for base_model_name_or_path.
void save_peft_adapter(const GPT& model, const std::string& directory, const std::string& base_model);

// True when DIR holds adapter_config.json.
bool is_peft_adapter_directory(const std::string& directory);

// Reads the adapter in DIR and attaches it to `model` (GPT::attach_lora, then the
// stored A and B). Throws tg::Error naming the file and what does not fit: a
// missing or unexpected tensor, a shape of another model, an option not applied.
LoraConfig load_peft_adapter(const std::string& directory, GPT& model);

}  // namespace tg
