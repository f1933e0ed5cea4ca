#include "tinygpt/training/checkpoint.h"

#include <charconv>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/optim/optimizer.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

namespace {

// The names of optimiser state tensors: "<prefix><parameter name>" (nn/optim/optimizer.h).
constexpr const char* kOptimizerStatePrefixes[] = {"optimizer.m.", "optimizer.v.", "optimizer.momentum."};

// Shortest text that reads back as the same double ("inf" included).
std::string exact_text(double value) {
  char text[64];
  const auto result = std::to_chars(text, text + sizeof text, value);
  return std::string(text, result.ptr);
}

nlohmann::json generator_json(const GeneratorState& state) {
  return {{"seed", state.seed}, {"counter", state.counter}};
}

// Reads the metadata of a file that claims to be a checkpoint; every error names the path.
class MetadataReader {
 public:
  explicit MetadataReader(const SafetensorsFile& file) : file_(file) {}

  const std::string& text(const std::string& key) const {
    auto entry = file_.metadata.find(key);
    check(entry != file_.metadata.end(), "checkpoint '", file_.path, "': the metadata has no '", key,
          "' entry (a damaged file, or one from another version of tinygpt)");
    return entry->second;
  }

  nlohmann::json json(const std::string& key) const {
    try {
      return parse_bounded_json(text(key), "checkpoint '" + file_.path + "': the '" + key + "' metadata");
    } catch (const nlohmann::json::exception& error) {
      fail("checkpoint '", file_.path, "': the '", key, "' metadata is not valid JSON: ", json_error_text(error));
    }
  }

  int64_t integer(const std::string& key) const {
    const std::string& value = text(key);
    int64_t parsed = 0;
    const auto result = std::from_chars(value.data(), value.data() + value.size(), parsed);
    check(result.ec == std::errc() && result.ptr == value.data() + value.size() && parsed >= 0, "checkpoint '",
          file_.path, "': '", key, "' is '", value, "', not a non-negative integer");
    return parsed;
  }

  double real(const std::string& key) const {
    const std::string& value = text(key);
    char* end = nullptr;
    const double parsed = std::strtod(value.c_str(), &end);
    check(!value.empty() && *end == '\0' && !std::isnan(parsed), "checkpoint '", file_.path, "': '", key, "' is '",
          value, "', not a number");
    return parsed;
  }

  // {"seed": S, "counter": C} with two unsigned 64-bit integers; `what` names it in the error.
  GeneratorState state_of(const nlohmann::json& state, const std::string& what) const {
    const auto field = [&](const char* name) {
      const std::optional<uint64_t> value =
          state.is_object() && state.contains(name) ? json_integer<uint64_t>(state.at(name)) : std::nullopt;
      check(value.has_value(), "checkpoint '", file_.path, "': ", what,
            " must be {\"seed\": S, \"counter\": C}, S and C integers from 0 to 2^64 - 1");
      return *value;
    };
    return GeneratorState{field("seed"), field("counter")};
  }

  GeneratorState generator(const std::string& key) const { return state_of(json(key), "'" + key + "'"); }

  std::vector<RankGenerators> rank_generators(const std::string& key) const {
    const nlohmann::json ranks = json(key);
    check(ranks.is_array(), "checkpoint '", file_.path, "': '", key, "' must be a list of each rank's generators");
    std::vector<RankGenerators> generators;
    for (const nlohmann::json& rank : ranks) {
      check(rank.is_object() && rank.contains("data") && rank.contains("dropout"), "checkpoint '", file_.path,
            "': each of '", key, "' must be {\"data\": {\"seed\": S, \"counter\": C}, \"dropout\": {...}}");
      const std::string what = "each generator in '" + key + "'";
      generators.push_back({state_of(rank.at("data"), what), state_of(rank.at("dropout"), what)});
    }
    return generators;
  }

  // Runs `parse`, prefixing any error with the path and the key.
  template <class Parse>
  auto parsed(const std::string& key, Parse parse) const {
    try {
      return parse(json(key));
    } catch (const tg::Error& error) {
      fail("checkpoint '", file_.path, "': bad '", key, "': ", error.what());
    } catch (const nlohmann::json::exception& error) {
      fail("checkpoint '", file_.path, "': bad '", key, "': ", json_error_text(error));
    }
  }

 private:
  const SafetensorsFile& file_;
};

// The tokenizer's JSON, checked to describe a tokenizer whose ids all fit the model.
nlohmann::json checked_tokenizer(const nlohmann::json& json, int64_t vocab_size) {
  const tokenizer::TextTokenizer tokenizer = tokenizer::TextTokenizer::from_json(json);
  check(tokenizer.vocab_size() <= vocab_size, "the ", tokenizer.kind(), " tokenizer has ", tokenizer.vocab_size(),
        " tokens but the config's vocab_size is only ", vocab_size);
  return json;
}

// The tensor `name` of the file, checked against the dtype and shape it must have.
const Tensor& expect_tensor(const Checkpoint& checkpoint, const std::string& name, const Shape& shape,
                            DType dtype = DType::Float32) {
  const Tensor* tensor = checkpoint.file.find(name);
  check(tensor != nullptr, "checkpoint '", checkpoint.path, "': tensor '", name, "' ", shape,
        dtype == DType::Float32 ? "" : std::string(" ") + dtype_name(dtype), " is missing (the file does not match its config)");
  check(tensor->dtype() == dtype && tensor->shape() == shape, "checkpoint '", checkpoint.path, "': tensor '", name,
        "' is ", dtype_name(tensor->dtype()), " ", tensor->shape(), ", expected ", dtype_name(dtype), " ", shape);
  return *tensor;
}

// Bytes a parameter takes at least in a file of weights in `format`.
int64_t least_bytes_per_parameter(DType format) { return format == DType::Float32 ? 4 : format == DType::BFloat16 ? 2 : 1; }

}  // namespace

void save_checkpoint(const std::string& path, const CheckpointHeader& header, const GPT& model,
                     const nn::Optimizer* optimizer) {
  check(!optimizer || model.weight_format() == DType::Float32 || model.lora(), "save_checkpoint: a model of ",
        dtype_name(model.weight_format()), " weights has no optimiser state to save");
  std::vector<NamedTensor> tensors;
  for (const auto& [name, parameter] : model.named_parameters()) tensors.push_back({name, parameter.detach()});
  if (optimizer) {
    const std::vector<NamedTensor> state = optimizer->state_tensors();
    tensors.insert(tensors.end(), state.begin(), state.end());
  }
  Metadata metadata = {
      {"format", kCheckpointFormat},
      {"config", header.config.to_json().dump()},
      {"tokenizer", header.tokenizer.dump()},
      {"training", header.settings.to_json().dump()},
      {"step", std::to_string(header.step)},
      {"optimizer", optimizer ? optimizer->name() : "none"},
      {"optimizer_step", std::to_string(optimizer ? optimizer->step_count() : 0)},
      {"data_generator", generator_json(header.data_generator).dump()},
      {"dropout_generator", generator_json(header.dropout_generator).dump()},
      {"best_val_loss", exact_text(header.best_val_loss)},
      {"weights", dtype_name(model.weight_format())},
  };
  if (!header.other_ranks.empty()) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankGenerators& rank : header.other_ranks)
      ranks.push_back({{"data", generator_json(rank.data)}, {"dropout", generator_json(rank.dropout)}});
    metadata["other_ranks"] = ranks.dump();
  }
  if (header.data) metadata["data"] = header.data->to_json().dump();
  save_safetensors(path, tensors, metadata);
}

Checkpoint load_checkpoint(const std::string& file_or_run) {
  const std::string path = std::filesystem::is_directory(file_or_run) ? find_checkpoint_for_sampling(file_or_run)
                                                                      : file_or_run;
  Checkpoint checkpoint;
  checkpoint.path = path;
  checkpoint.file = map_safetensors(path);
  const Metadata& metadata = checkpoint.file.metadata;
  auto format = metadata.find("format");
  check(format != metadata.end(), "checkpoint '", path,
        "' is a safetensors file but not a tinygpt checkpoint (its metadata has no 'format' entry)");
  check(format->second == kCheckpointFormat, "checkpoint '", path, "' has format '", format->second,
        "'; this tinygpt reads '", kCheckpointFormat, "'");

  const MetadataReader reader(checkpoint.file);
  CheckpointHeader& header = checkpoint.header;
  header.config = reader.parsed("config", [](const nlohmann::json& json) { return GPTConfig::from_json(json); });
  header.tokenizer = reader.parsed("tokenizer", [&](const nlohmann::json& json) {
    return checked_tokenizer(json, header.config.vocab_size);
  });
  header.settings = reader.parsed("training", [](const nlohmann::json& json) { return TrainSettings::from_json(json); });
  header.step = reader.integer("step");
  header.data_generator = reader.generator("data_generator");
  header.dropout_generator = reader.generator("dropout_generator");
  header.best_val_loss = reader.real("best_val_loss");
  if (metadata.count("other_ranks")) header.other_ranks = reader.rank_generators("other_ranks");
  if (metadata.count("data"))
    header.data = DataSource::from_json(reader.json("data"), "checkpoint '" + path + "': the 'data' metadata");
  const std::string& optimizer = reader.text("optimizer");
  check(optimizer == "adamw" || optimizer == "muon" || optimizer == "none", "checkpoint '", path,
        "': unknown optimizer '", optimizer, "' (expected 'adamw', 'muon' or 'none')");
  checkpoint.optimizer = optimizer;
  checkpoint.has_optimizer_state = optimizer != "none";
  if (metadata.count("weights")) {
    const std::string& weights = reader.text("weights");
    check(weights == "float32" || weights == "bfloat16" || weights == "int8", "checkpoint '", path, "': 'weights' is '",
          weights, "'; expected float32, bfloat16 or int8");
    header.weights = nn::parse_weight_format(weights);
    check(header.weights == DType::Float32 || !checkpoint.has_optimizer_state || header.settings.lora_rank > 0,
          "checkpoint '", path, "' holds ", weights, " weights and an optimiser state; quantized checkpoints hold "
          "weights only (but a QLoRA run's, whose optimiser state is its adapters')");
  }
  // Before any model is built from the config, a first check that the file can
  // hold what it describes (a 3 MB file declaring n_layer = 10^9 would otherwise
  // allocate gigabytes before restore_parameters names the first missing tensor).
  int64_t stored_bytes = 0;
  for (const NamedTensor& tensor : checkpoint.file.tensors)
    stored_bytes += tensor.tensor.numel() * static_cast<int64_t>(dtype_size(tensor.tensor.dtype()));
  const int64_t described = header.config.parameter_count();
  const int64_t bytes_per_parameter = least_bytes_per_parameter(header.weights);
  check(described <= stored_bytes / bytes_per_parameter, "checkpoint '", path, "': its config describes ", described,
        " parameters, more than the ", stored_bytes, " bytes of tensors in the file can hold at ", bytes_per_parameter,
        " byte", bytes_per_parameter == 1 ? "" : "s", " per parameter (", dtype_name(header.weights),
        " weights; the file does not match its config)");
  checkpoint.optimizer_step = reader.integer("optimizer_step");
  return checkpoint;
}

void restore_parameters(const Checkpoint& checkpoint, GPT& model) {
  if (const std::optional<LoraConfig> lora = checkpoint.header.settings.lora(checkpoint.header.config); lora && !model.lora())
    model.attach_lora(*lora, 0);  // a LoRA run's checkpoint: its adapters' values come next, with the base's
  if (checkpoint.header.weights != model.weight_format()) {
    check(model.weight_format() == DType::Float32, "restore_parameters: checkpoint '", checkpoint.path, "' holds ",
          dtype_name(checkpoint.header.weights), " weights; the model's are ", dtype_name(model.weight_format()));
    model.quantize(checkpoint.header.weights);
  }
  std::set<std::string> expected;
  for (const auto& [name, parameter] : model.named_parameters()) {
    const Tensor stored = expect_tensor(checkpoint, name, parameter.shape(), parameter.dtype());
    raw::copy_(parameter, stored);
    checkpoint.file.evict(stored);  // the mapping's pages leave resident memory once copied: one copy at a time
    expected.insert(name);
    if (checkpoint.has_optimizer_state) {
      for (const char* prefix : kOptimizerStatePrefixes) expected.insert(prefix + name);
    }
  }
  for (const NamedTensor& tensor : checkpoint.file.tensors) {
    check(expected.count(tensor.name) == 1, "checkpoint '", checkpoint.path, "': unexpected tensor '", tensor.name,
          "' ", tensor.tensor.shape(), " (the model built from its config has no such parameter)");
  }
  try {
    model.check_quantized_weights();
  } catch (const Error& error) {
    fail("checkpoint '", checkpoint.path, "': ", error.what());
  }
}

void restore_optimizer(const Checkpoint& checkpoint, nn::Optimizer& optimizer) {
  check(checkpoint.has_optimizer_state, "checkpoint '", checkpoint.path,
        "' holds weights only (no optimiser state): it cannot be resumed; resume from ", kLatestCheckpointFile);
  check(checkpoint.optimizer == optimizer.name(), "checkpoint '", checkpoint.path, "' holds the state of ",
        checkpoint.optimizer, ", not of ", optimizer.name(), "; a run keeps its optimiser");
  for (const NamedTensor& state : optimizer.state_tensors()) {
    const Tensor stored = expect_tensor(checkpoint, state.name, state.tensor.shape());
    raw::copy_(state.tensor, stored);
    checkpoint.file.evict(stored);
  }
  optimizer.set_step_count(checkpoint.optimizer_step);
}

std::string find_checkpoint_for_sampling(const std::string& path) {
  namespace fs = std::filesystem;
  if (fs::is_regular_file(path)) return path;
  check(fs::is_directory(path), "checkpoint '", path, "' does not exist");
  for (const char* file : {kBestCheckpointFile, kLatestCheckpointFile}) {
    const fs::path candidate = fs::path(path) / file;
    if (fs::is_regular_file(candidate)) return candidate.string();
  }
  fail("checkpoint directory '", path, "' has neither ", kBestCheckpointFile, " nor ", kLatestCheckpointFile,
       " (train with: tinygpt train --out ", path, ")");
}

}  // namespace tg
