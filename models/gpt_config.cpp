#include "tinygpt/models/gpt_config.h"

#include <array>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tinygpt/nn/enum_names.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/shape.h"

namespace tg {

namespace {

constexpr int64_t kGpt2Vocab = 50257;

struct Preset {
  const char* name;
  int64_t n_layer, n_head, n_embd, block_size, batch_size;
  double dropout = 0.0;
  bool gpt2_vocab = false;  // the GPT-2 BPE vocabulary by default (else the tokenizer or `vocab` gives one)
  double learning_rate = 6e-4;  // the peak lr a run from scratch starts with
  // The Llama-style block (RMSNorm, SwiGLU, rotate-half RoPE, no biases) and its sizes.
  bool llama_block = false;
  int64_t n_kv_head = 0, head_dim = 0, mlp_hidden = 0;
  int64_t vocab = 0;  // the published vocabulary of a shape-only preset
  double rope_base = 10000.0;
  const char* rope_scaling = "none";
  bool qk_norm = false;
  bool tie_embeddings = true;
};

// nanoGPT's numbers: the published GPT-2 shapes (batch 12 as its train_gpt2 config),
// its CPU settings and its shakespeare_char "baby GPT". Peak learning rates: the
// GPT-3 paper's for models of these sizes (6e-4 at 125M, as nanoGPT's GPT-2 run),
// nanoGPT's 1e-3 for the baby GPT, and 2e-3 for cpu-small (docs/training.md).
// llama-small is cpu-small's budget in the Llama block: with 2 of 4 KV heads
// attention holds 3C^2 instead of 4C^2 and SwiGLU's default hidden 3C holds
// 9C^2, so a block is 12C^2 as GPT-2's. The published shapes are those of the
// models' config.json files, for benchmarks (their weights: issue "open models").
constexpr std::array<Preset, 10> kPresets{{
    {.name = "gpt2", .n_layer = 12, .n_head = 12, .n_embd = 768, .block_size = 1024, .batch_size = 12, .gpt2_vocab = true},
    {.name = "gpt2-medium", .n_layer = 24, .n_head = 16, .n_embd = 1024, .block_size = 1024, .batch_size = 12,
     .gpt2_vocab = true, .learning_rate = 3e-4},
    {.name = "gpt2-large", .n_layer = 36, .n_head = 20, .n_embd = 1280, .block_size = 1024, .batch_size = 12,
     .gpt2_vocab = true, .learning_rate = 2.5e-4},
    {.name = "gpt2-xl", .n_layer = 48, .n_head = 25, .n_embd = 1600, .block_size = 1024, .batch_size = 12,
     .gpt2_vocab = true, .learning_rate = 2e-4},
    {.name = "cpu-small", .n_layer = 4, .n_head = 4, .n_embd = 128, .block_size = 64, .batch_size = 12,
     .learning_rate = 2e-3},
    {.name = "baby", .n_layer = 6, .n_head = 6, .n_embd = 384, .block_size = 256, .batch_size = 64, .dropout = 0.2,
     .learning_rate = 1e-3},
    {.name = "llama-small", .n_layer = 4, .n_head = 4, .n_embd = 128, .block_size = 64, .batch_size = 12,
     .learning_rate = 2e-3, .llama_block = true, .n_kv_head = 2},
    {.name = "smollm2-135m", .n_layer = 30, .n_head = 9, .n_embd = 576, .block_size = 8192, .batch_size = 4,
     .learning_rate = 3e-3, .llama_block = true, .n_kv_head = 3, .mlp_hidden = 1536, .vocab = 49152,
     .rope_base = 100000.0},
    {.name = "qwen3-0.6b", .n_layer = 28, .n_head = 16, .n_embd = 1024, .block_size = 40960, .batch_size = 4,
     .learning_rate = 3e-4, .llama_block = true, .n_kv_head = 8, .head_dim = 128, .mlp_hidden = 3072,
     .vocab = 151936, .rope_base = 1000000.0, .qk_norm = true},
    {.name = "llama-3.2-1b", .n_layer = 16, .n_head = 32, .n_embd = 2048, .block_size = 131072, .batch_size = 4,
     .learning_rate = 3e-4, .llama_block = true, .n_kv_head = 8, .mlp_hidden = 8192, .vocab = 128256,
     .rope_base = 500000.0, .rope_scaling = "llama3:32,1,4,8192"},
}};

std::string preset_names() {
  std::string names;
  for (const Preset& preset : kPresets) names += (names.empty() ? "" : ", ") + std::string(preset.name);
  return names;
}

constexpr Named<PositionalEncoding> kPositionalNames[] = {{PositionalEncoding::Learned, "learned"},
                                                           {PositionalEncoding::Sinusoidal, "sinusoidal"},
                                                           {PositionalEncoding::Rope, "rope"}};
constexpr Named<nn::GeluApproximation> kGeluNames[] = {{nn::GeluApproximation::Tanh, "tanh"},
                                                       {nn::GeluApproximation::Erf, "erf"}};
constexpr Named<InitScheme> kInitNames[] = {{InitScheme::Gpt2, "gpt2"},
                                            {InitScheme::XavierUniform, "xavier_uniform"},
                                            {InitScheme::XavierNormal, "xavier_normal"}};

const Preset& preset_of(const std::string& name) {
  for (const Preset& preset : kPresets)
    if (name == preset.name) return preset;
  fail("unknown preset '", name, "' (known: ", preset_names(), ")");
}

}  // namespace

std::vector<std::string> GPTConfig::preset_list() {
  std::vector<std::string> names;
  for (const Preset& preset : kPresets) names.push_back(preset.name);
  return names;
}

double GPTConfig::preset_learning_rate() const {
  for (const Preset& known : kPresets)
    if (preset == known.name) return known.learning_rate;
  // A model loaded from elsewhere (a Hugging Face directory) gets the rate of the preset of its shape, else GPT-2's.
  for (const Preset& known : kPresets)
    if (n_layer == known.n_layer && n_embd == known.n_embd) return known.learning_rate;
  return preset_of("gpt2").learning_rate;
}

const char* positional_encoding_name(PositionalEncoding kind) { return name_in(kPositionalNames, kind); }

PositionalEncoding positional_encoding_named(const std::string& name) {
  return value_in(kPositionalNames, name, "positional encoding", "GPTConfig: ");
}

const char* init_scheme_name(InitScheme scheme) { return name_in(kInitNames, scheme); }

InitScheme init_scheme_named(const std::string& name) { return value_in(kInitNames, name, "init", "GPTConfig: "); }

bool GPTConfig::preset_uses_gpt2_vocabulary(const std::string& name) { return preset_of(name).gpt2_vocab; }

int64_t GPTConfig::preset_vocab_size(const std::string& name) {
  const Preset& preset = preset_of(name);
  return preset.gpt2_vocab ? kGpt2Vocab : preset.vocab;
}

namespace {

// The switches of the Llama-style block and the sizes a preset gives it.
void apply_llama_block(const Preset& preset, GPTConfig& config) {
  config.norm = nn::NormKind::RMSNorm;
  config.mlp = nn::MlpKind::SwiGLU;
  config.bias = nn::BiasMode::None;
  config.positional = PositionalEncoding::Rope;
  config.rope_pairing = nn::RopePairing::Half;
  config.rope_base = preset.rope_base;
  config.rope_scaling = nn::RopeScaling::parse(preset.rope_scaling);
  config.n_kv_head = preset.n_kv_head;
  config.head_dim = preset.head_dim;
  config.mlp_hidden = preset.mlp_hidden;
  config.qk_norm = preset.qk_norm;
  config.tie_embeddings = preset.tie_embeddings;
  config.init = InitScheme::Gpt2;
}

}  // namespace

GPTConfig GPTConfig::preset_named(const std::string& name, int64_t vocab_size) {
  const Preset& preset = preset_of(name);
  check(vocab_size > 0 || preset.gpt2_vocab || preset.vocab > 0, "GPTConfig: preset '", name,
        "' is character-level: its vocab_size comes from the tokenizer, got ", vocab_size);
  GPTConfig config;
  config.preset = name;
  config.vocab_size = vocab_size > 0 ? vocab_size : preset.vocab > 0 ? preset.vocab : kGpt2Vocab;
  config.n_layer = preset.n_layer;
  config.n_head = preset.n_head;
  config.n_embd = preset.n_embd;
  config.block_size = preset.block_size;
  config.batch_size = preset.batch_size;
  config.dropout = preset.dropout;
  if (preset.llama_block) apply_llama_block(preset, config);
  config.validate();
  return config;
}

void GPTConfig::validate() const {
  check(vocab_size > 0, "GPTConfig: vocab_size must be positive, got ", vocab_size);
  check(block_size > 0, "GPTConfig: block_size must be positive, got ", block_size);
  check(n_layer >= 0, "GPTConfig: n_layer must be 0 or more, got ", n_layer);  // 0: a bigram model (docs/course/)
  check(batch_size > 0, "GPTConfig: batch_size must be positive, got ", batch_size);
  check(n_layer > 0 || positional == PositionalEncoding::Rope, "GPTConfig: a model of 0 layers (a bigram model) ",
        "has no attention to read positions in; give it RoPE, which adds none to the stream");
  try {
    transformer_options().validate();
  } catch (const Error& error) {
    fail("GPTConfig: ", error.what());
  }
}

int64_t GPTConfig::parameter_count() const {
  // Sizes come from files and flags: every product and sum is checked.
  const char* op = "GPTConfig::parameter_count";
  const auto mul = [op](int64_t a, int64_t b) { return checked_mul(a, b, op); };
  const auto add = [op](int64_t a, int64_t b) { return checked_add(a, b, op); };
  const nn::TransformerOptions options = transformer_options();
  const int64_t channels = n_embd, head = options.head_size(), hidden = options.hidden_size();
  const bool all_biases = bias == nn::BiasMode::All;
  // One norm over `width` channels: a weight unless RMSNorm drops it, a bias for LayerNorm with biases.
  const auto norm_of = [&](int64_t width) {
    return add(norm_weight ? width : 0, norm == nn::NormKind::LayerNorm && all_biases ? width : 0);
  };
  const int64_t token_embeddings = mul(vocab_size, channels);
  const int64_t positions = positional == PositionalEncoding::Learned ? mul(block_size, channels) : 0;
  const int64_t fc_rows = mul(mlp == nn::MlpKind::SwiGLU ? 2 : 1, hidden);
  int64_t per_block = add(mul(options.qkv_width(), channels), mul(channels, options.attention_width()));
  const bool has_mlp = mlp != nn::MlpKind::None;
  per_block = add(per_block, add(mul(fc_rows, channels), mul(channels, hidden)));
  per_block = add(per_block, mul(has_mlp ? 2 : 1, norm_of(channels)));
  if (qk_norm && norm_weight) per_block = add(per_block, mul(2, head));
  if (bias != nn::BiasMode::None) per_block = add(per_block, options.qkv_width());
  if (all_biases) per_block = add(per_block, channels);                         // attn.c_proj
  if (all_biases && has_mlp) per_block = add(per_block, add(fc_rows, channels));  // mlp.c_fc, mlp.c_proj
  const int64_t lm_head = tie_embeddings ? 0 : token_embeddings;
  return add(add(add(add(token_embeddings, positions), mul(n_layer, per_block)), norm_of(channels)), lm_head);
}

nn::TransformerOptions GPTConfig::transformer_options(DType dtype) const {
  nn::TransformerOptions options;
  options.n_embd = n_embd;
  options.n_head = n_head;
  options.n_kv_head = n_kv_head;
  options.head_dim = head_dim;
  options.norm = norm;
  options.norm_weight = norm_weight;
  options.norm_eps = norm_eps;
  options.mlp = mlp;
  options.mlp_hidden = mlp_hidden;
  options.bias = bias;
  options.qk_norm = qk_norm;
  options.dropout = dropout;
  options.gelu = gelu;
  options.rope = positional == PositionalEncoding::Rope;
  options.rotary = {rope_base, rope_scaling, rope_pairing};
  options.dtype = dtype;
  return options;
}

namespace {

// A JSON value in an error message: a number as it reads, anything else by its
// type (never dumped whole: a file's value may be nested arbitrarily deep).
std::string described(const nlohmann::json& value) {
  if (!value.is_number()) return std::string("a ") + value.type_name();
  std::ostringstream text;
  text << value.get<double>();
  return text.str();
}

// Calls visit(key, field) for every field of a GPTConfig stored as a plain JSON
// value (the enums are stored by name, beside): the one list to_json and
// from_json share.
template <class Config, class Visit>
void visit_plain_fields(Config& config, Visit visit) {
  visit("preset", config.preset);
  visit("vocab_size", config.vocab_size);
  visit("block_size", config.block_size);
  visit("n_layer", config.n_layer);
  visit("n_head", config.n_head);
  visit("n_embd", config.n_embd);
  visit("n_kv_head", config.n_kv_head);
  visit("head_dim", config.head_dim);
  visit("batch_size", config.batch_size);
  visit("dropout", config.dropout);
  visit("norm_weight", config.norm_weight);
  visit("norm_eps", config.norm_eps);
  visit("mlp_hidden", config.mlp_hidden);
  visit("qk_norm", config.qk_norm);
  visit("tie_embeddings", config.tie_embeddings);
  visit("scale_embeddings", config.scale_embeddings);
  visit("rope_base", config.rope_base);
}

// The switches of the block stored by name, and the spellings of files written
// before them: "bias" was true or false, the eps "layer_norm_eps".
void read_block_switches(const nlohmann::json& json, GPTConfig& config) {
  if (json.contains("bias")) {
    const nlohmann::json& bias = json.at("bias");
    config.bias = bias.is_boolean() ? (bias.get<bool>() ? nn::BiasMode::All : nn::BiasMode::None)
                                    : nn::bias_mode_named(bias.get<std::string>());
  }
  check(!(json.contains("layer_norm_eps") && json.contains("norm_eps")),
        "GPTConfig::from_json: both 'layer_norm_eps' and 'norm_eps' (the same value under its old and new name)");
  if (json.contains("layer_norm_eps")) {
    check(json.at("layer_norm_eps").is_number(), "GPTConfig::from_json: 'layer_norm_eps' must be a number");
    config.norm_eps = json.at("layer_norm_eps").get<double>();
  }
  if (json.contains("norm")) config.norm = nn::norm_kind_named(json.at("norm").get<std::string>());
  if (json.contains("mlp")) config.mlp = nn::mlp_kind_named(json.at("mlp").get<std::string>());
  if (json.contains("rope_scaling")) config.rope_scaling = nn::RopeScaling::parse(json.at("rope_scaling").get<std::string>());
  if (json.contains("rope_pairing")) config.rope_pairing = nn::rope_pairing_named(json.at("rope_pairing").get<std::string>());
}

}  // namespace

nlohmann::json GPTConfig::to_json() const {
  nlohmann::json json = {{"positional", positional_encoding_name(positional)},
                         {"gelu", name_in(kGeluNames, gelu)},
                         {"init", init_scheme_name(init)},
                         {"bias", nn::bias_mode_name(bias)},
                         {"norm", nn::norm_kind_name(norm)},
                         {"mlp", nn::mlp_kind_name(mlp)},
                         {"rope_scaling", rope_scaling.text()},
                         {"rope_pairing", nn::rope_pairing_name(rope_pairing)}};
  visit_plain_fields(*this, [&](const char* key, const auto& field) { json[key] = field; });
  return json;
}

GPTConfig GPTConfig::from_json(const nlohmann::json& json) {
  check(json.is_object(), "GPTConfig::from_json: expected an object, got ", json.type_name());
  const GPTConfig defaults;
  const nlohmann::json known = defaults.to_json();
  for (const auto& [key, value] : json.items())
    check(known.contains(key) || key == "layer_norm_eps", "GPTConfig::from_json: unknown key '", key, "'");
  for (const char* key : {"vocab_size", "block_size", "n_layer", "n_head", "n_embd"})
    check(json.contains(key), "GPTConfig::from_json: missing '", key, "'");
  GPTConfig config;
  try {
    visit_plain_fields(config, [&](const char* key, auto& field) {
      if (!json.contains(key)) return;
      const nlohmann::json& value = json.at(key);
      using Field = std::decay_t<decltype(field)>;
      // nlohmann would read 65.5 into an integer as 65: a size with a fraction is an error.
      if constexpr (std::is_integral_v<Field> && !std::is_same_v<Field, bool>)
        check(value.is_number_integer(), "GPTConfig::from_json: '", key, "' must be an integer, got ", described(value));
      value.get_to(field);
    });
    if (json.contains("positional")) config.positional = positional_encoding_named(json.at("positional").get<std::string>());
    if (json.contains("gelu")) config.gelu = value_in(kGeluNames, json.at("gelu").get<std::string>(), "gelu", "GPTConfig: ");
    if (json.contains("init")) config.init = init_scheme_named(json.at("init").get<std::string>());
    read_block_switches(json, config);
  } catch (const nlohmann::json::exception& error) {
    fail("GPTConfig::from_json: ", json_error_text(error));
  }
  config.validate();
  return config;
}

}  // namespace tg
