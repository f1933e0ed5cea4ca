#include "tinygpt/models/gpt_config.h"

#include <array>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/shape.h"

namespace tg {

namespace {

constexpr int64_t kGpt2Vocab = 50257;

struct Preset {
  const char* name;
  int64_t n_layer, n_head, n_embd, block_size, batch_size;
  double dropout;
  bool gpt2_vocab;  // the GPT-2 BPE vocabulary by default (else the tokenizer must give one)
  double learning_rate;  // the peak lr a run from scratch starts with
};

// nanoGPT's numbers: the published GPT-2 shapes (batch 12 as its train_gpt2 config),
// its CPU settings and its shakespeare_char "baby GPT". Peak learning rates: the
// GPT-3 paper's for models of these sizes (6e-4 at 125M, as nanoGPT's GPT-2 run),
// nanoGPT's 1e-3 for the baby GPT, and 2e-3 for cpu-small (docs/training.md).
constexpr std::array<Preset, 6> kPresets{{
    {"gpt2", 12, 12, 768, 1024, 12, 0.0, true, 6e-4},
    {"gpt2-medium", 24, 16, 1024, 1024, 12, 0.0, true, 3e-4},
    {"gpt2-large", 36, 20, 1280, 1024, 12, 0.0, true, 2.5e-4},
    {"gpt2-xl", 48, 25, 1600, 1024, 12, 0.0, true, 2e-4},
    {"cpu-small", 4, 4, 128, 64, 12, 0.0, false, 2e-3},
    {"baby", 6, 6, 384, 256, 64, 0.2, false, 1e-3},
}};

std::string preset_names() {
  std::string names;
  for (const Preset& preset : kPresets) names += (names.empty() ? "" : ", ") + std::string(preset.name);
  return names;
}

// The name of one value of an enum switch, as the config's JSON writes it.
template <class Enum>
struct Named {
  Enum value;
  const char* name;
};

constexpr Named<PositionalEncoding> kPositionalNames[] = {{PositionalEncoding::Learned, "learned"},
                                                           {PositionalEncoding::Sinusoidal, "sinusoidal"},
                                                           {PositionalEncoding::Rope, "rope"}};
constexpr Named<nn::GeluApproximation> kGeluNames[] = {{nn::GeluApproximation::Tanh, "tanh"},
                                                       {nn::GeluApproximation::Erf, "erf"}};
constexpr Named<InitScheme> kInitNames[] = {{InitScheme::Gpt2, "gpt2"},
                                            {InitScheme::XavierUniform, "xavier_uniform"},
                                            {InitScheme::XavierNormal, "xavier_normal"}};

template <class Enum, size_t N>
const char* name_in(const Named<Enum> (&names)[N], Enum value) {
  for (const Named<Enum>& entry : names)
    if (entry.value == value) return entry.name;
  return "?";
}

// The value called `name`; an unknown name throws, naming `what` and the known names.
template <class Enum, size_t N>
Enum value_in(const Named<Enum> (&names)[N], const std::string& name, const char* what) {
  std::string known;
  for (const Named<Enum>& entry : names) {
    if (name == entry.name) return entry.value;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  fail("GPTConfig: unknown ", what, " '", name, "' (known: ", known, ")");
}

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
  return value_in(kPositionalNames, name, "positional encoding");
}

const char* init_scheme_name(InitScheme scheme) { return name_in(kInitNames, scheme); }

InitScheme init_scheme_named(const std::string& name) { return value_in(kInitNames, name, "init"); }

bool GPTConfig::preset_uses_gpt2_vocabulary(const std::string& name) { return preset_of(name).gpt2_vocab; }

GPTConfig GPTConfig::preset_named(const std::string& name, int64_t vocab_size) {
  const Preset& preset = preset_of(name);
  check(vocab_size > 0 || preset.gpt2_vocab, "GPTConfig: preset '", name,
        "' is character-level: its vocab_size comes from the tokenizer, got ", vocab_size);
  GPTConfig config;
  config.preset = name;
  config.vocab_size = vocab_size > 0 ? vocab_size : kGpt2Vocab;
  config.n_layer = preset.n_layer;
  config.n_head = preset.n_head;
  config.n_embd = preset.n_embd;
  config.block_size = preset.block_size;
  config.batch_size = preset.batch_size;
  config.dropout = preset.dropout;
  config.validate();
  return config;
}

void GPTConfig::validate() const {
  check(vocab_size > 0, "GPTConfig: vocab_size must be positive, got ", vocab_size);
  check(block_size > 0, "GPTConfig: block_size must be positive, got ", block_size);
  check(n_layer > 0, "GPTConfig: n_layer must be positive, got ", n_layer);
  check(batch_size > 0, "GPTConfig: batch_size must be positive, got ", batch_size);
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
  const int64_t channels = n_embd, with_bias = bias ? 1 : 0;
  const int64_t token_embeddings = mul(vocab_size, channels);
  const int64_t positions = positional == PositionalEncoding::Learned ? mul(block_size, channels) : 0;
  const int64_t per_block =
      add(add(mul(12, mul(channels, channels)), mul(2, channels)), mul(11, mul(channels, with_bias)));
  const int64_t final_norm = channels + channels * with_bias;
  const int64_t head = tie_embeddings ? 0 : token_embeddings;
  return add(add(add(add(token_embeddings, positions), mul(n_layer, per_block)), final_norm), head);
}

nn::TransformerOptions GPTConfig::transformer_options(DType dtype) const {
  nn::TransformerOptions options;
  options.n_embd = n_embd;
  options.n_head = n_head;
  options.bias = bias;
  options.dropout = dropout;
  options.gelu = gelu;
  options.layer_norm_eps = layer_norm_eps;
  options.rope = positional == PositionalEncoding::Rope;
  options.rope_base = rope_base;
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
  visit("batch_size", config.batch_size);
  visit("dropout", config.dropout);
  visit("bias", config.bias);
  visit("layer_norm_eps", config.layer_norm_eps);
  visit("tie_embeddings", config.tie_embeddings);
  visit("scale_embeddings", config.scale_embeddings);
  visit("rope_base", config.rope_base);
}

}  // namespace

nlohmann::json GPTConfig::to_json() const {
  nlohmann::json json = {{"positional", positional_encoding_name(positional)},
                         {"gelu", name_in(kGeluNames, gelu)},
                         {"init", init_scheme_name(init)}};
  visit_plain_fields(*this, [&](const char* key, const auto& field) { json[key] = field; });
  return json;
}

GPTConfig GPTConfig::from_json(const nlohmann::json& json) {
  check(json.is_object(), "GPTConfig::from_json: expected an object, got ", json.type_name());
  const GPTConfig defaults;
  const nlohmann::json known = defaults.to_json();
  for (const auto& [key, value] : json.items())
    check(known.contains(key), "GPTConfig::from_json: unknown key '", key, "'");
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
    if (json.contains("gelu")) config.gelu = value_in(kGeluNames, json.at("gelu").get<std::string>(), "gelu");
    if (json.contains("init")) config.init = init_scheme_named(json.at("init").get<std::string>());
  } catch (const nlohmann::json::exception& error) {
    fail("GPTConfig::from_json: ", json_error_text(error));
  }
  config.validate();
  return config;
}

}  // namespace tg
