#include "tinygpt/models/lora_config.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/bounded_json.h"

namespace tg {

namespace {

bool has(const std::vector<std::string>& targets, const std::string& name) {
  return std::find(targets.begin(), targets.end(), name) != targets.end();
}

// What one item of --lora-targets stands for, before the model is consulted.
std::vector<std::string> expand(const std::string& item, const GPTConfig& config) {
  const bool gated = uses_llama_module_paths(config);
  static const std::map<std::string, std::vector<std::string>> kNames = {
      {"q", {"q"}}, {"k", {"k"}}, {"v", {"v"}}, {"o", {"o"}}, {"gate", {"gate"}}, {"up", {"up"}}, {"down", {"down"}},
      {"q_proj", {"q"}}, {"k_proj", {"k"}}, {"v_proj", {"v"}}, {"o_proj", {"o"}}, {"gate_proj", {"gate"}},
      {"up_proj", {"up"}}, {"down_proj", {"down"}}, {"c_attn", {"q", "k", "v"}}, {"c_proj", {"o", "down"}},
      {"attn.c_proj", {"o"}}, {"mlp.c_proj", {"down"}}, {"attn", {"q", "k", "v", "o"}}};
  if (item == "all-linear" || item == "all") {
    if (gated) return {"q", "k", "v", "o", "gate", "up", "down"};
    return {"q", "k", "v", "o", "up", "down"};
  }
  if (item == "mlp") return gated ? std::vector<std::string>{"gate", "up", "down"} : std::vector<std::string>{"up", "down"};
  if (item == "c_fc" || item == "mlp.c_fc") return gated ? std::vector<std::string>{"gate", "up"} : std::vector<std::string>{"up"};
  const auto found = kNames.find(item);
  return found == kNames.end() ? std::vector<std::string>{} : found->second;
}

std::string layer_path(const GPTConfig& config, int64_t layer) {
  return (uses_llama_module_paths(config) ? "model.layers." : "transformer.h.") + std::to_string(layer) + ".";
}

}  // namespace

std::vector<std::string> parse_lora_targets(const std::string& text, const GPTConfig& config, const std::string& flag) {
  std::set<std::string> chosen;
  std::stringstream items(text);
  std::string item;
  while (std::getline(items, item, ',')) {
    item.erase(0, item.find_first_not_of(' '));
    item.erase(item.find_last_not_of(' ') + 1);
    if (item.empty()) continue;
    const std::vector<std::string> projections = expand(item, config);
    check(!projections.empty(), flag, ": '", item,
          "' is not a projection; give q, k, v, o, gate, up, down (or the Hugging Face names q_proj ... down_proj, "
          "GPT-2's c_attn, c_proj, c_fc), attn, mlp or all-linear");
    chosen.insert(projections.begin(), projections.end());
  }
  check(!chosen.empty(), flag, " names no projection; give e.g. q,v or all-linear");
  check(!chosen.count("gate") || uses_llama_module_paths(config), flag,
        ": gate: this model's MLP (GELU) has no gate projection; its c_fc is 'up'");
  const int qkv = static_cast<int>(chosen.count("q") + chosen.count("k") + chosen.count("v"));
  check(uses_llama_module_paths(config) || qkv == 0 || qkv == 3, flag,
        ": this model has GPT-2's layout, whose c_attn computes q, k and v in one projection: adapt all three "
        "(c_attn) or none");
  std::vector<std::string> targets;
  for (const char* name : kLoraProjections)
    if (chosen.count(name)) targets.push_back(name);
  return targets;
}

std::string describe_lora_targets(const std::vector<std::string>& targets) {
  std::string text;
  for (size_t i = 0; i < targets.size(); ++i)
    text += (i == 0 ? "" : i + 1 == targets.size() ? " and " : ", ") + targets[i];
  return text;
}

std::vector<LoraModule> lora_modules(const GPTConfig& config, const std::vector<std::string>& targets) {
  const bool gated = uses_llama_module_paths(config);
  const int64_t query_rows = config.n_head * config.head_size(), kv_rows = config.kv_heads() * config.head_size();
  const int64_t hidden = config.transformer_options().hidden_size();
  std::vector<LoraModule> modules;
  for (int64_t layer = 0; layer < config.n_layer; ++layer) {
    const std::string block = "blocks." + std::to_string(layer) + ".", path = layer_path(config, layer);
    // A Linear split into named row blocks, each adapted if targeted, each its own PEFT module.
    auto add_split = [&](const std::string& linear, std::vector<std::pair<std::string, int64_t>> blocks,
                         const std::string& peft_module) {
      LoraModule module{block + linear, {}, {}};
      for (const auto& [name, rows] : blocks) {
        module.parts.push_back({name, rows, has(targets, name)});
        if (has(targets, name)) module.peft_paths.push_back(path + peft_module + name + "_proj");
      }
      if (!module.peft_paths.empty()) modules.push_back(std::move(module));
    };
    // A Linear adapted as one block.
    auto add_whole = [&](const std::string& linear, const std::string& target, int64_t rows, const std::string& peft_path) {
      if (has(targets, target)) modules.push_back({block + linear, {{"", rows, true}}, {path + peft_path}});
    };
    if (gated) {
      add_split("attn.qkv", {{"q", query_rows}, {"k", kv_rows}, {"v", kv_rows}}, "self_attn.");
      add_whole("attn.c_proj", "o", config.n_embd, "self_attn.o_proj");
      add_split("mlp.c_fc", {{"gate", hidden}, {"up", hidden}}, "mlp.");
      add_whole("mlp.c_proj", "down", config.n_embd, "mlp.down_proj");
    } else {
      add_whole("attn.qkv", "q", query_rows + 2 * kv_rows, "attn.c_attn");
      add_whole("attn.c_proj", "o", config.n_embd, "attn.c_proj");
      if (config.mlp == nn::MlpKind::None) continue;  // attention only: up and down adapt nothing
      add_whole("mlp.c_fc", "up", hidden, "mlp.c_fc");
      add_whole("mlp.c_proj", "down", config.n_embd, "mlp.c_proj");
    }
  }
  return modules;
}

bool uses_llama_module_paths(const GPTConfig& config) { return config.mlp == nn::MlpKind::SwiGLU; }

std::vector<std::string> peft_target_modules(const GPTConfig& config, const std::vector<std::string>& targets) {
  std::vector<std::string> modules;
  if (uses_llama_module_paths(config)) {
    for (const std::string& target : targets) modules.push_back(target + "_proj");
    return modules;
  }
  if (has(targets, "q")) modules.push_back("c_attn");
  if (has(targets, "o")) modules.push_back("attn.c_proj");
  if (has(targets, "up")) modules.push_back("c_fc");
  if (has(targets, "down")) modules.push_back("mlp.c_proj");
  return modules;
}

nlohmann::json LoraConfig::to_json() const {
  return {{"rank", settings.rank}, {"alpha", settings.alpha}, {"dropout", settings.dropout}, {"targets", targets}};
}

LoraConfig LoraConfig::from_json(const nlohmann::json& json) {
  check(json.is_object() && json.contains("rank") && json.contains("alpha") && json.contains("dropout") &&
            json.contains("targets") && json["targets"].is_array(),
        "LoRA config: expected {\"rank\", \"alpha\", \"dropout\", \"targets\": [...]}, got ", json.dump());
  LoraConfig config;
  const std::optional<int64_t> rank = json_integer<int64_t>(json["rank"]);
  check(rank && *rank > 0 && *rank <= 65536, "LoRA config: the rank must be an integer in [1, 65536], got ",
        json["rank"].dump());
  config.settings.rank = *rank;
  check(json["alpha"].is_number() && json["alpha"].get<double>() > 0, "LoRA config: alpha must be a number > 0, got ",
        json["alpha"].dump());
  config.settings.alpha = json["alpha"].get<double>();
  check(json["dropout"].is_number() && json["dropout"].get<double>() >= 0 && json["dropout"].get<double>() < 1,
        "LoRA config: dropout must be a number in [0, 1), got ", json["dropout"].dump());
  config.settings.dropout = json["dropout"].get<double>();
  std::set<std::string> seen;
  for (const auto& target : json["targets"]) {
    check(target.is_string() && std::find(std::begin(kLoraProjections), std::end(kLoraProjections),
                                          target.get<std::string>()) != std::end(kLoraProjections),
          "LoRA config: unknown target ", target.dump(), " (expected q, k, v, o, gate, up or down)");
    check(seen.insert(target.get<std::string>()).second, "LoRA config: target ", target.dump(), " appears twice");
    config.targets.push_back(target.get<std::string>());
  }
  check(!config.targets.empty(), "LoRA config: no targets");
  return config;
}

bool LoraConfig::operator==(const LoraConfig& other) const {
  return settings.rank == other.settings.rank && settings.alpha == other.settings.alpha &&
         settings.dropout == other.settings.dropout && targets == other.targets;
}

}  // namespace tg
