#include "tinygpt/models/lora_files.h"

#include <filesystem>
#include <map>
#include <set>

#include "tinygpt/datasets/data.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace fs = std::filesystem;

namespace {

// One stored factor: its PEFT name, the model's parameter it fills, and its shape.
struct Factor {
  std::string peft_name, parameter;
  Shape shape;
};

std::vector<Factor> factors(const GPT& model, const std::vector<std::string>& targets, int64_t rank) {
  std::vector<Factor> all;
  for (const LoraModule& module : lora_modules(model.config(), targets)) {
    const int64_t in = model.linear_named(module.linear).in_features();
    size_t adapted = 0;
    for (const nn::LoraPart& part : module.parts) {
      if (!part.adapted) continue;
      const std::string suffix = part.name.empty() ? "" : "_" + part.name;
      const std::string peft = "base_model.model." + module.peft_paths[adapted++];
      all.push_back({peft + ".lora_A.weight", module.linear + ".lora.A" + suffix, {rank, in}});
      all.push_back({peft + ".lora_B.weight", module.linear + ".lora.B" + suffix, {part.rows, rank}});
    }
  }
  return all;
}

std::map<std::string, Tensor> parameters_by_name(const GPT& model) {
  std::map<std::string, Tensor> parameters;
  for (const auto& [name, parameter] : model.named_parameters()) parameters.emplace(name, parameter);
  return parameters;
}

// The canonical targets of PEFT's target_modules (a list of module names, or "all-linear").
std::vector<std::string> targets_of(const nlohmann::json& modules, const GPTConfig& config, const std::string& where) {
  if (modules.is_string()) {
    check(modules.get<std::string>() == "all-linear", where, ": target_modules \"", modules.get<std::string>(),
          "\" is a regular expression; tinygpt reads a list of module names or \"all-linear\"");
    return parse_lora_targets("all-linear", config, where);
  }
  check(modules.is_array() && !modules.empty(), where, ": target_modules must be a non-empty list of module names");
  std::string list;
  for (const auto& module : modules) {
    check(module.is_string(), where, ": target_modules holds ", module.dump(), ", not a module name");
    list += module.get<std::string>() + ",";
  }
  return parse_lora_targets(list, config, where + ": target_modules");
}

// PEFT options whose effect tinygpt does not apply: refused, never ignored.
void check_plain_lora(const nlohmann::json& json, const std::string& where) {
  auto is_unset = [&](const char* key) {
    if (!json.contains(key)) return true;
    const nlohmann::json& value = json[key];
    return value.is_null() || (value.is_boolean() && !value.get<bool>()) || (value.is_object() && value.empty()) ||
           (value.is_array() && value.empty());
  };
  // A key's text is only read where the key is there (check's message is built before it tests).
  if (json.contains("peft_type"))
    check(json["peft_type"] == "LORA", where, ": peft_type is ", json["peft_type"].dump(), "; tinygpt applies LORA adapters");
  check(is_unset("use_rslora"), where, ": use_rslora scales by alpha / sqrt(r), which tinygpt does not apply");
  check(is_unset("use_dora"), where, ": use_dora (DoRA) is not applied by tinygpt");
  check(is_unset("rank_pattern") && is_unset("alpha_pattern"), where,
        ": rank_pattern / alpha_pattern give modules their own rank or alpha, which tinygpt does not apply");
  check(is_unset("modules_to_save"), where, ": modules_to_save trains whole modules beside the adapters; tinygpt "
        "applies adapters only");
  if (json.contains("bias"))
    check(json["bias"] == "none", where, ": bias ", json["bias"].dump(),
          " trains biases too; tinygpt applies adapters with bias \"none\"");
}

}  // namespace

void save_peft_adapter(const GPT& model, const std::string& directory, const std::string& base_model) {
  check(model.lora().has_value(), "save_peft_adapter: the model has no LoRA adapters");
  const LoraConfig& lora = *model.lora();
  const std::map<std::string, Tensor> parameters = parameters_by_name(model);
  std::vector<NamedTensor> tensors;
  for (const Factor& factor : factors(model, lora.targets, lora.settings.rank))
    tensors.push_back({factor.peft_name, parameters.at(factor.parameter).detach()});
  fs::create_directories(directory);
  save_safetensors((fs::path(directory) / kAdapterWeightsFile).string(), tensors, {{"format", "pt"}});
  const nlohmann::ordered_json config = {
      {"peft_type", "LORA"},
      {"task_type", "CAUSAL_LM"},
      {"base_model_name_or_path", base_model},
      {"r", lora.settings.rank},
      {"lora_alpha", lora.settings.alpha},
      {"lora_dropout", lora.settings.dropout},
      {"target_modules", peft_target_modules(model.config(), lora.targets)},
      {"bias", "none"},
      {"fan_in_fan_out", !uses_llama_module_paths(model.config())},  // GPT-2's Conv1D
      {"inference_mode", true},
      {"init_lora_weights", true},
      {"modules_to_save", nullptr},
      {"layers_to_transform", nullptr},
      {"layers_pattern", nullptr},
      {"rank_pattern", nlohmann::json::object()},
      {"alpha_pattern", nlohmann::json::object()},
      {"use_rslora", false},
      {"use_dora", false},
      {"revision", nullptr},
  };
  write_file_atomically((fs::path(directory) / kAdapterConfigFile).string(), config.dump(2) + "\n",
                        "save_peft_adapter");
}

bool is_peft_adapter_directory(const std::string& directory) {
  return fs::is_regular_file(fs::path(directory) / kAdapterConfigFile);
}

LoraConfig load_peft_adapter(const std::string& directory, GPT& model) {
  const std::string config_path = (fs::path(directory) / kAdapterConfigFile).string();
  const std::string weights_path = (fs::path(directory) / kAdapterWeightsFile).string();
  check(fs::is_regular_file(config_path), "--lora ", directory, ": no ", kAdapterConfigFile,
        " (a LoRA adapter directory holds adapter_config.json and adapter_model.safetensors)");
  check(fs::is_regular_file(weights_path), "--lora ", directory, ": no ", kAdapterWeightsFile, " beside ",
        kAdapterConfigFile);
  nlohmann::json json;
  try {
    json = parse_bounded_json(read_text_file(config_path), config_path);
  } catch (const nlohmann::json::exception& error) {
    fail(config_path, ": not valid JSON: ", json_error_text(error));
  }
  check(json.is_object(), config_path, ": expected a JSON object (PEFT's LoraConfig)");
  check_plain_lora(json, config_path);
  check(json.contains("r") && json.contains("lora_alpha") && json.contains("target_modules"), config_path,
        ": needs r, lora_alpha and target_modules");
  const std::optional<int64_t> rank = json_integer<int64_t>(json["r"]);
  check(rank && *rank > 0 && *rank <= 65536, config_path, ": r must be an integer in [1, 65536], got ", json["r"].dump());
  check(json["lora_alpha"].is_number() && json["lora_alpha"].get<double>() > 0, config_path,
        ": lora_alpha must be a number > 0, got ", json["lora_alpha"].dump());
  LoraConfig lora;
  lora.settings.rank = *rank;
  lora.settings.alpha = json["lora_alpha"].get<double>();
  if (json.contains("lora_dropout") && json["lora_dropout"].is_number()) {
    const double dropout = json["lora_dropout"].get<double>();
    check(dropout >= 0 && dropout < 1, config_path, ": lora_dropout must be in [0, 1), got ", dropout);
    lora.settings.dropout = dropout;
  }
  lora.targets = targets_of(json["target_modules"], model.config(), config_path);

  const SafetensorsFile file = map_safetensors(weights_path);
  const std::vector<Factor> expected = factors(model, lora.targets, lora.settings.rank);
  std::map<std::string, const NamedTensor*> stored;
  for (const NamedTensor& tensor : file.tensors) stored.emplace(tensor.name, &tensor);
  std::set<std::string> known;
  // Every tensor checked before anything is allocated: r and the names come from the stranger's files.
  for (const Factor& factor : expected) {
    known.insert(factor.peft_name);
    const auto found = stored.find(factor.peft_name);
    check(found != stored.end(), weights_path, ": no tensor '", factor.peft_name, "', which target_modules ",
          json["target_modules"].dump(), " of a model of ", model.config().n_layer, " layers needs");
    const Tensor& source = found->second->tensor;
    check(source.dtype() == DType::Float32 || source.dtype() == DType::BFloat16 || source.dtype() == DType::Float16,
          weights_path, ": '", factor.peft_name, "' is ", dtype_name(source.dtype()), "; adapters are read in F32, BF16 or F16");
    check(source.shape() == factor.shape, weights_path, ": '", factor.peft_name, "' is ", source.shape(), ", expected ",
          factor.shape, " (r ", lora.settings.rank, " of this model): the adapter belongs to another model or rank");
  }
  for (const NamedTensor& tensor : file.tensors)
    check(known.count(tensor.name), weights_path, ": tensor '", tensor.name, "' adapts no module of this model under ",
          "target_modules ", json["target_modules"].dump());

  model.attach_lora(lora, 0);
  const std::map<std::string, Tensor> parameters = parameters_by_name(model);
  for (const Factor& factor : expected) raw::copy_(parameters.at(factor.parameter), stored.at(factor.peft_name)->tensor);
  return lora;
}

}  // namespace tg
