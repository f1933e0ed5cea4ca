// config.json <-> GPTConfig for the Hugging Face GPT-2 layout (models/hf_gpt2.h).
//
// A GPT-2 config.json carries many keys; most do not touch the forward pass
// (token ids, dropout rates, initialiser range, generation settings, the
// transformers version, ...) and are ignored. The ones that do are read, or
// checked to ask for nothing tinygpt lacks.
#include <cmath>
#include <string>

#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

using Json = nlohmann::json;

constexpr int64_t kGpt2Vocab = 50257;
constexpr int64_t kGpt2EndOfText = 50256;  // <|endoftext|>: GPT-2's bos and eos

// A required size: a positive integer.
int64_t read_size(const Json& config, const std::string& where, const char* key) {
  check(config.contains(key), where, ": \"", key, "\" is missing (tinygpt needs the model's size in config.json)");
  const Json& value = config.at(key);
  check(value.is_number_integer() && value.get<int64_t>() > 0, where, ": \"", key,
        "\" must be a positive integer, got ", value.dump());
  return value.get<int64_t>();
}

// An optional key (absent or null: nullptr) whose value must pass `is_type`
// (&Json::is_string, &Json::is_boolean, &Json::is_number, ...).
const Json* optional_key(const Json& config, const std::string& where, const char* key,
                         bool (Json::*is_type)() const noexcept, const char* type_name) {
  if (!config.contains(key) || config.at(key).is_null()) return nullptr;
  const Json& value = config.at(key);
  check((value.*is_type)(), where, ": \"", key, "\" must be ", type_name, ", got ", value.dump());
  return &value;
}

// A boolean key that changes the math: only `supported` (its Hugging Face default) is.
void require_flag(const Json& config, const std::string& where, const char* key, bool supported, const char* why) {
  const Json* value = optional_key(config, where, key, &Json::is_boolean, "true or false");
  if (value != nullptr && value->get<bool>() != supported)
    fail(where, ": \"", key, "\": ", value->dump(), " is not supported (", why, ")");
}

nn::GeluApproximation read_activation(const Json& config, const std::string& where) {
  const Json* value = optional_key(config, where, "activation_function", &Json::is_string, "a string");
  const std::string name = value ? value->get<std::string>() : "gelu_new";  // GPT-2's, the default
  if (name == "gelu_new" || name == "gelu_pytorch_tanh") return nn::GeluApproximation::Tanh;
  if (name == "gelu") return nn::GeluApproximation::Erf;
  fail(where, ": \"activation_function\": \"", name, "\" is not supported (tinygpt has gelu_new, gelu_pytorch_tanh, gelu)");
}

}  // namespace

GPTConfig hf_gpt2_config(const Json& config_json, const std::string& where) {
  check(config_json.is_object(), where, ": config.json must hold a JSON object, got ", config_json.type_name());
  if (const Json* type = optional_key(config_json, where, "model_type", &Json::is_string, "a string"))
    check(type->get<std::string>() == "gpt2", where, ": \"model_type\" is \"", type->get<std::string>(),
          "\"; tinygpt reads GPT-2 (\"gpt2\") only");

  GPTConfig config;
  config.preset = "hf-gpt2";
  config.vocab_size = read_size(config_json, where, "vocab_size");
  config.n_layer = read_size(config_json, where, "n_layer");
  config.n_head = read_size(config_json, where, "n_head");
  config.n_embd = read_size(config_json, where, "n_embd");
  // n_positions sizes the wpe table; very old files only have its former name, n_ctx.
  config.block_size = read_size(config_json, where, config_json.contains("n_positions") ? "n_positions" : "n_ctx");
  config.gelu = read_activation(config_json, where);
  if (const Json* epsilon = optional_key(config_json, where, "layer_norm_epsilon", &Json::is_number, "a number")) {
    config.norm_eps = epsilon->get<double>();
    check(config.norm_eps > 0 && std::isfinite(config.norm_eps), where,
          ": \"layer_norm_epsilon\" must be positive, got ", epsilon->dump());
  }
  if (const Json* tied = optional_key(config_json, where, "tie_word_embeddings", &Json::is_boolean, "true or false"))
    config.tie_embeddings = tied->get<bool>();
  // Dropout rates are training settings: the imported model has none (config.dropout = 0).

  // n_inner / 4, not 4 * n_embd: an n_embd too large for a model is only refused later (by its parameter
  // count), and 4 * n_embd would overflow first.
  if (const Json* inner = optional_key(config_json, where, "n_inner", &Json::is_number_integer, "an integer or null"))
    check(inner->get<int64_t>() % 4 == 0 && inner->get<int64_t>() / 4 == config.n_embd, where, ": \"n_inner\": ",
          inner->dump(), " is not supported (tinygpt's MLP is 4 * n_embd wide, n_embd = ", config.n_embd, ")");
  require_flag(config_json, where, "scale_attn_weights", true, "tinygpt always divides attention scores by sqrt(HS)");
  require_flag(config_json, where, "scale_attn_by_inverse_layer_idx", false,
               "tinygpt does not scale attention scores by 1 / (layer + 1)");
  require_flag(config_json, where, "add_cross_attention", false, "tinygpt is a decoder without cross-attention");
  // reorder_and_upcast_attn only changes the precision of the same scores: accepted.

  try {
    config.validate();
  } catch (const Error& error) {
    fail(where, ": ", error.what());
  }
  return config;
}

Json hf_gpt2_config_json(const GPTConfig& config) {
  Json json = {
      {"model_type", "gpt2"},
      {"architectures", {"GPT2LMHeadModel"}},
      {"n_layer", config.n_layer},
      {"n_head", config.n_head},
      {"n_embd", config.n_embd},
      {"n_positions", config.block_size},
      {"n_ctx", config.block_size},
      {"n_inner", nullptr},
      {"vocab_size", config.vocab_size},
      {"layer_norm_epsilon", config.norm_eps},
      {"activation_function", config.gelu == nn::GeluApproximation::Tanh ? "gelu_new" : "gelu"},
      {"tie_word_embeddings", config.tie_embeddings},
      {"scale_attn_weights", true},
      // tinygpt drops out the embeddings and each residual branch, never the attention probabilities.
      {"embd_pdrop", config.dropout},
      {"resid_pdrop", config.dropout},
      {"attn_pdrop", 0.0},
      {"torch_dtype", "float32"},
      {"tinygpt", {{"config", config.to_json()}}},
  };
  if (config.vocab_size == kGpt2Vocab) {  // the GPT-2 BPE: <|endoftext|> begins and ends texts
    json["bos_token_id"] = kGpt2EndOfText;
    json["eos_token_id"] = kGpt2EndOfText;
  }
  return json;
}

}  // namespace tg
