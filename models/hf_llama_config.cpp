// config.json <-> GPTConfig for the Llama family in the Hugging Face layout
// (models/hf_llama.h). Defaults are those of transformers' LlamaConfig,
// MistralConfig, Qwen2Config and Qwen3Config for a key a file leaves out.
#include <cmath>
#include <string>

#include "tinygpt/models/hf_llama.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/bounded_json.h"

namespace tg {

namespace {

using Json = nlohmann::json;

struct Architecture {
  const char* name;        // config.json's "architectures"[0]
  const char* model_type;  // and its "model_type"
};
constexpr Architecture kArchitectures[] = {{"LlamaForCausalLM", "llama"},
                                           {"MistralForCausalLM", "mistral"},
                                           {"Qwen2ForCausalLM", "qwen2"},
                                           {"Qwen3ForCausalLM", "qwen3"}};

const Json* optional_key(const Json& config, const char* key) {
  return config.contains(key) && !config.at(key).is_null() ? &config.at(key) : nullptr;
}

int64_t read_size(const Json& config, const std::string& where, const char* key) {
  const Json* value = optional_key(config, key);
  check(value != nullptr, where, ": \"", key, "\" is missing (tinygpt needs the model's size in config.json)");
  const std::optional<int64_t> size = json_integer<int64_t>(*value);
  check(size && *size > 0, where, ": \"", key, "\" must be a positive integer, got ", value->dump());
  return *size;
}

double read_positive(const Json& config, const std::string& where, const char* key, double fallback) {
  const Json* value = optional_key(config, key);
  if (value == nullptr) return fallback;
  check(value->is_number() && value->get<double>() > 0 && std::isfinite(value->get<double>()), where, ": \"", key,
        "\" must be a positive number, got ", value->dump());
  return value->get<double>();
}

bool read_flag(const Json& config, const std::string& where, const char* key, bool fallback) {
  const Json* value = optional_key(config, key);
  if (value == nullptr) return fallback;
  check(value->is_boolean(), where, ": \"", key, "\" must be true or false, got ", value->dump());
  return value->get<bool>();
}

std::string read_architecture(const Json& config, const std::string& where) {
  if (const Json* names = optional_key(config, "architectures")) {
    check(names->is_array() && names->size() == 1 && (*names)[0].is_string(), where,
          ": \"architectures\" must list one class name, got ", names->dump());
    const std::string name = (*names)[0].get<std::string>();
    for (const Architecture& known : kArchitectures)
      if (name == known.name) return name;
    fail(where, ": \"architectures\": \"", name, "\" is not supported (tinygpt reads GPT2LMHeadModel, LlamaForCausalLM, "
         "MistralForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM)");
  }
  const Json* type = optional_key(config, "model_type");
  check(type != nullptr && type->is_string(), where, ": neither \"architectures\" nor \"model_type\" says what model this is");
  for (const Architecture& known : kArchitectures)
    if (type->get<std::string>() == known.model_type) return known.name;
  fail(where, ": \"model_type\": ", type->dump(), " is not supported (tinygpt reads gpt2, llama, mistral, qwen2 and qwen3)");
}

// rope_scaling: null, or {"rope_type" (or "type"): "default" | "linear" | "llama3", "factor": F, ...}.
nn::RopeScaling read_rope_scaling(const Json& config, const std::string& where) {
  const Json* scaling = optional_key(config, "rope_scaling");
  if (scaling == nullptr) return {};
  check(scaling->is_object(), where, ": \"rope_scaling\" must be an object or null, got ", scaling->dump());
  const Json* type = optional_key(*scaling, "rope_type");
  if (type == nullptr) type = optional_key(*scaling, "type");
  check(type != nullptr && type->is_string(), where, ": \"rope_scaling\" has no \"rope_type\"");
  const std::string name = type->get<std::string>();
  const std::string field = where + ": \"rope_scaling\"";
  nn::RopeScaling result;
  if (name == "default") return result;
  if (name == "linear") {
    result.kind = nn::RopeScaling::Kind::Linear;
    result.factor = read_positive(*scaling, field, "factor", 1);
    return result;
  }
  if (name == "llama3") {
    result.kind = nn::RopeScaling::Kind::Llama3;
    result.factor = read_positive(*scaling, field, "factor", 8);
    result.low_freq_factor = read_positive(*scaling, field, "low_freq_factor", 1);
    result.high_freq_factor = read_positive(*scaling, field, "high_freq_factor", 4);
    result.original_context = read_positive(*scaling, field, "original_max_position_embeddings", 8192);
    return result;
  }
  fail(where, ": \"rope_scaling\" of type \"", name, "\" is not implemented (tinygpt has linear and llama3)");
}

std::vector<int64_t> read_token_ids(const Json& config, const std::string& where, const char* key) {
  const Json* value = optional_key(config, key);
  if (value == nullptr) return {};
  std::vector<int64_t> ids;
  for (const Json& id : value->is_array() ? *value : Json::array({*value})) {
    const std::optional<int64_t> number = json_integer<int64_t>(id);
    check(number && *number >= 0, where, ": \"", key, "\" must be a token id or a list of them, got ", value->dump());
    ids.push_back(*number);
  }
  return ids;
}

}  // namespace

bool is_hf_llama_architecture(const std::string& architecture) {
  for (const Architecture& known : kArchitectures)
    if (architecture == known.name || architecture == known.model_type) return true;
  return false;
}

HfLlamaConfig hf_llama_config(const Json& config_json, const std::string& where) {
  check(config_json.is_object(), where, ": config.json must hold a JSON object, got ", config_json.type_name());
  HfLlamaConfig result;
  HfModelInfo& info = result.info;
  info.architecture = read_architecture(config_json, where);
  const bool qwen2 = info.architecture == "Qwen2ForCausalLM", qwen3 = info.architecture == "Qwen3ForCausalLM";
  const bool mistral = info.architecture == "MistralForCausalLM";

  GPTConfig& config = result.config;
  config.preset = "hf-" + std::string(qwen2 ? "qwen2" : qwen3 ? "qwen3" : mistral ? "mistral" : "llama");
  config.vocab_size = read_size(config_json, where, "vocab_size");
  config.n_layer = read_size(config_json, where, "num_hidden_layers");
  config.n_head = read_size(config_json, where, "num_attention_heads");
  config.n_embd = read_size(config_json, where, "hidden_size");
  config.mlp_hidden = read_size(config_json, where, "intermediate_size");
  config.n_kv_head = optional_key(config_json, "num_key_value_heads") ? read_size(config_json, where, "num_key_value_heads")
                                                                       : config.n_head;
  config.head_dim = optional_key(config_json, "head_dim") ? read_size(config_json, where, "head_dim") : 0;
  config.block_size = optional_key(config_json, "max_position_embeddings")
                          ? read_size(config_json, where, "max_position_embeddings")
                          : 2048;
  config.norm = nn::NormKind::RMSNorm;
  config.norm_weight = true;
  config.norm_eps = read_positive(config_json, where, "rms_norm_eps", 1e-6);
  config.mlp = nn::MlpKind::SwiGLU;
  config.positional = PositionalEncoding::Rope;
  config.rope_pairing = nn::RopePairing::Half;
  config.rope_base = read_positive(config_json, where, "rope_theta", 10000.0);
  config.rope_scaling = read_rope_scaling(config_json, where);
  config.qk_norm = qwen3;
  config.tie_embeddings = read_flag(config_json, where, "tie_word_embeddings", false);
  config.dropout = 0;

  if (const Json* activation = optional_key(config_json, "hidden_act"))
    check(activation->is_string() && activation->get<std::string>() == "silu", where, ": \"hidden_act\": ",
          activation->dump(), " is not supported (tinygpt's gated MLP is SwiGLU: \"silu\")");
  if (const Json* partial = optional_key(config_json, "partial_rotary_factor"))
    check(partial->is_number() && partial->get<double>() == 1.0, where, ": \"partial_rotary_factor\": ", partial->dump(),
          " is not implemented (tinygpt rotates every channel of a head)");

  // Biases: Qwen2 always has them on q, k and v; Llama's attention_bias puts them on q, k, v and o, and
  // mlp_bias on the MLP's three: tinygpt's bias modes hold none, q/k/v only, or all of them.
  const bool attention_bias = read_flag(config_json, where, "attention_bias", false);
  const bool mlp_bias = read_flag(config_json, where, "mlp_bias", false);
  if (qwen2) {
    config.bias = nn::BiasMode::Qkv;
  } else if (attention_bias && mlp_bias) {
    config.bias = nn::BiasMode::All;
  } else {
    check(!attention_bias && !mlp_bias, where, ": \"", attention_bias ? "attention_bias" : "mlp_bias",
          "\": true without \"", attention_bias ? "mlp_bias" : "attention_bias",
          "\" is not supported (tinygpt has biases on every Linear, on q/k/v only, or none)");
    config.bias = nn::BiasMode::None;
  }

  // A sliding window: Qwen turns it on with use_sliding_window; Mistral's applies whenever it is set.
  if (const Json* window = optional_key(config_json, "sliding_window")) {
    const bool used = (qwen2 || qwen3) ? read_flag(config_json, where, "use_sliding_window", false) : true;
    const std::optional<int64_t> size = json_integer<int64_t>(*window);
    check(size && *size > 0, where, ": \"sliding_window\" must be a positive integer or null, got ", window->dump());
    if (used && *size < config.block_size) {
      check(mistral, where, ": \"use_sliding_window\" with a window of ", *size, " tokens shorter than the context (",
            config.block_size, ") is not implemented");
      // Within the window sliding-window attention is full causal attention: a context of the window's
      // length computes exactly what the published model computes.
      info.note = "context limited to the sliding window of " + std::to_string(*size) + " tokens (max_position_embeddings " +
                  std::to_string(config.block_size) + ")";
      config.block_size = *size;
    }
  }

  const std::vector<int64_t> bos = read_token_ids(config_json, where, "bos_token_id");
  if (!bos.empty()) info.bos_token_id = bos.front();
  info.eos_token_ids = read_token_ids(config_json, where, "eos_token_id");
  for (int64_t id : bos) check(id < config.vocab_size, where, ": \"bos_token_id\" ", id, " is not below vocab_size");
  for (int64_t id : info.eos_token_ids)
    check(id < config.vocab_size, where, ": \"eos_token_id\" ", id, " is not below vocab_size");

  try {
    config.validate();
    (void)config.parameter_count();  // sizes whose products overflow are refused here
  } catch (const Error& error) {
    fail(where, ": ", error.what());
  }
  return result;
}

Json hf_llama_config_json(const GPTConfig& config, const HfModelInfo& info, DType stored) {
  const bool qwen3 = config.qk_norm, qwen2 = config.bias == nn::BiasMode::Qkv;
  const char* architecture = qwen3 ? "Qwen3ForCausalLM" : qwen2 ? "Qwen2ForCausalLM" : "LlamaForCausalLM";
  Json json = {
      {"architectures", {architecture}},
      {"model_type", qwen3 ? "qwen3" : qwen2 ? "qwen2" : "llama"},
      {"vocab_size", config.vocab_size},
      {"hidden_size", config.n_embd},
      {"intermediate_size", config.transformer_options().hidden_size()},
      {"num_hidden_layers", config.n_layer},
      {"num_attention_heads", config.n_head},
      {"num_key_value_heads", config.kv_heads()},
      {"head_dim", config.head_size()},
      {"max_position_embeddings", config.block_size},
      {"rms_norm_eps", config.norm_eps},
      {"rope_theta", config.rope_base},
      {"hidden_act", "silu"},
      {"tie_word_embeddings", config.tie_embeddings},
      {"attention_dropout", 0.0},
      {"torch_dtype", stored == DType::BFloat16 ? "bfloat16" : "float32"},
      {"tinygpt", {{"config", config.to_json()}}},
  };
  if (!qwen2) {
    json["attention_bias"] = config.bias == nn::BiasMode::All;
    json["mlp_bias"] = config.bias == nn::BiasMode::All;
  }
  if (qwen2 || qwen3) json["use_sliding_window"] = false;
  const nn::RopeScaling& scaling = config.rope_scaling;
  if (scaling.kind == nn::RopeScaling::Kind::Linear)
    json["rope_scaling"] = {{"rope_type", "linear"}, {"factor", scaling.factor}};
  else if (scaling.kind == nn::RopeScaling::Kind::Llama3)
    json["rope_scaling"] = {{"rope_type", "llama3"},
                            {"factor", scaling.factor},
                            {"low_freq_factor", scaling.low_freq_factor},
                            {"high_freq_factor", scaling.high_freq_factor},
                            {"original_max_position_embeddings", static_cast<int64_t>(scaling.original_context)}};
  else
    json["rope_scaling"] = nullptr;
  if (info.bos_token_id) json["bos_token_id"] = *info.bos_token_id;
  if (info.eos_token_ids.size() == 1) json["eos_token_id"] = info.eos_token_ids.front();
  if (info.eos_token_ids.size() > 1) json["eos_token_id"] = info.eos_token_ids;
  return json;
}

}  // namespace tg
