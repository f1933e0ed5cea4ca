// A model directory as the Hugging Face Hub publishes it: config.json and
// safetensors weights, for GPT-2 (models/hf_gpt2.h) or the Llama family
// (models/hf_llama.h). This file tells them apart and reads config.json.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "tinygpt/models/hf_llama.h"

namespace tg {

inline constexpr const char* kHfConfigFile = "config.json";

// DIR/config.json, parsed with the bounds of tensor/io/bounded_json.h. Throws
// tg::Error naming the file when it is missing, too large or not JSON.
nlohmann::json read_hf_config_json(const std::string& directory);

// True when DIR holds config.json and safetensors weights (one file or an index).
bool is_hf_model_directory(const std::string& directory);

// Loads DIR whichever architecture config.json names: GPT-2 or the Llama family.
// weight_format bfloat16 keeps the weight matrices in bfloat16 (inference only).
// Throws tg::Error naming config.json and its "architectures" for any other model.
LoadedHfModel load_hf_model(const std::string& directory, DType weight_format = DType::Float32);

// Writes `model` in the layout of its block: GPT-2's (float32 only) or the Llama
// family's (float32 or bfloat16), with `info`'s token ids in config.json.
void export_hf_model(const GPT& model, const HfModelInfo& info, const std::string& directory, DType stored);

}  // namespace tg
