#include "tinygpt/models/hf_directory.h"

#include <filesystem>

#include "tinygpt/datasets/data.h"
#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/io/safetensors_directory.h"
#include "tinygpt/tensor/storage.h"

namespace tg {

namespace {

namespace fs = std::filesystem;

bool is_gpt2(const nlohmann::json& config) {
  if (config.contains("architectures") && config["architectures"].is_array() && !config["architectures"].empty())
    return config["architectures"][0] == "GPT2LMHeadModel";
  return config.value("model_type", "") == "gpt2";
}

}  // namespace

nlohmann::json read_hf_config_json(const std::string& directory) {
  const fs::path path = fs::path(directory) / kHfConfigFile;
  check(fs::is_regular_file(path), path.string(), " is missing (a Hugging Face model directory has config.json beside its weights)");
  const std::string text = read_text_file(path.string());
  try {
    return parse_bounded_json(text, path.string());
  } catch (const nlohmann::json::exception& error) {
    fail(path.string(), ": not valid JSON: ", json_error_text(error));
  }
}

bool is_hf_model_directory(const std::string& directory) {
  return fs::is_regular_file(fs::path(directory) / kHfConfigFile) && has_safetensors_weights(directory);
}

LoadedHfModel load_hf_model(const std::string& directory, DType weight_format) {
  check(fs::is_directory(directory), directory, " is not a directory (a Hugging Face model is a directory with ",
        "config.json and model.safetensors)");
  const nlohmann::json config = read_hf_config_json(directory);
  if (!is_gpt2(config)) return load_hf_llama(directory, weight_format);  // which names any other architecture
  LoadedHfModel loaded{load_hf_gpt2(directory), {}};
  loaded.info.architecture = "GPT2LMHeadModel";
  if (loaded.model->config().vocab_size == 50257) {  // the GPT-2 BPE: <|endoftext|> begins and ends texts
    loaded.info.bos_token_id = 50256;
    loaded.info.eos_token_ids = {50256};
  }
  if (weight_format != DType::Float32) {
    loaded.model->quantize(weight_format);
    Storage::release_cached();
  }
  return loaded;
}

void export_hf_model(const GPT& model, const HfModelInfo& info, const std::string& directory, DType stored) {
  if (model.config().norm == nn::NormKind::LayerNorm && model.config().mlp == nn::MlpKind::Gelu) {
    check(stored == DType::Float32, "export: ", directory, ": GPT-2's layout is written in float32, not ", dtype_name(stored));
    export_hf_gpt2(model, directory);
    return;
  }
  export_hf_llama(model, info, directory, stored);
}

}  // namespace tg
