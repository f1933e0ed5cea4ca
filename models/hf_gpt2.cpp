// Importing and exporting GPT-2 in the Hugging Face layout: the tensor names,
// the Conv1D transpose, and the checks (models/hf_gpt2.h; config.json is read
// and written in models/hf_gpt2_config.cpp).
//
//   tinygpt parameter                 Hugging Face tensor            stored
//   wte.weight (V, C)                 wte.weight (V, C)              as is
//   wpe.weight (T, C)                 wpe.weight (T, C)              as is
//   blocks.{i}.ln_1.weight (C)        h.{i}.ln_1.weight (C)          as is     (and .bias, ln_2 alike)
//   blocks.{i}.attn.qkv.weight (3C, C)  h.{i}.attn.c_attn.weight (C, 3C)  transposed
//   blocks.{i}.attn.c_proj.weight (C, C) h.{i}.attn.c_proj.weight (C, C)  transposed
//   blocks.{i}.mlp.c_fc.weight (4C, C)  h.{i}.mlp.c_fc.weight (C, 4C)     transposed
//   blocks.{i}.mlp.c_proj.weight (C, 4C) h.{i}.mlp.c_proj.weight (4C, C)  transposed
//   ln_f.{weight,bias} (C)            ln_f.{weight,bias} (C)         as is
//   lm_head.weight (V, C) [untied]    lm_head.weight (V, C)          as is
// The biases keep their names and shapes (blocks -> h, qkv -> c_attn). c_attn's
// output columns are q, k, v in that order, as the rows of tinygpt's qkv, so
// the transpose is all it takes.

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <map>

#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg {

namespace {

namespace fs = std::filesystem;

constexpr const char* kConfigFile = "config.json";
constexpr const char* kWeightsFile = "model.safetensors";
constexpr const char* kCharVocabularyFile = "char_vocabulary.txt";
constexpr const char* kCharSpecialTokensFile = "char_special_tokens.json";
constexpr const char* kModelPrefix = "transformer.";  // GPT2LMHeadModel's name for the GPT2Model inside it

// The Hugging Face name of a tinygpt parameter (table above).
std::string hf_name(const std::string& name) {
  std::string result = name;
  if (result.starts_with("blocks.")) result.replace(0, std::strlen("blocks"), "h");
  if (const size_t qkv = result.find(".attn.qkv."); qkv != std::string::npos)
    result.replace(qkv, std::strlen(".attn.qkv."), ".attn.c_attn.");
  return result;
}

// GPT-2's Conv1D keeps weights (in, out), tinygpt's Linear (out, in): every
// matrix inside the blocks is one of those four.
bool stored_transposed(const std::string& name, const Tensor& parameter) {
  return name.starts_with("blocks.") && parameter.dim() == 2;
}

// Older files carry each layer's causal mask ("h.3.attn.bias", a (1, 1, T, T)
// lower triangle) and "h.3.attn.masked_bias" (the -1e4 fill value): constants
// rebuilt by the model, not parameters. Skipped.
bool is_attention_buffer(const std::string& name) {
  if (!name.starts_with("h.")) return false;
  const size_t layer_end = name.find_first_not_of("0123456789", 2);
  if (layer_end == 2 || layer_end == std::string::npos) return false;
  const std::string rest = name.substr(layer_end);
  return rest == ".attn.bias" || rest == ".attn.masked_bias";
}

std::string describe_sizes(const GPTConfig& config) {
  return "n_layer " + std::to_string(config.n_layer) + ", n_head " + std::to_string(config.n_head) + ", n_embd " +
         std::to_string(config.n_embd) + ", n_positions " + std::to_string(config.block_size) + ", vocab_size " +
         std::to_string(config.vocab_size);
}

// The file's tensors by name without the "transformer." prefix (which files may
// use or not); the attention buffers are left out.
std::map<std::string, const NamedTensor*> index_tensors(const SafetensorsFile& file, const std::string& where) {
  std::map<std::string, const NamedTensor*> index;
  for (const NamedTensor& named : file.tensors) {
    const std::string name = named.name.starts_with(kModelPrefix) ? named.name.substr(std::strlen(kModelPrefix))
                                                                   : named.name;
    if (is_attention_buffer(name)) continue;
    const auto [existing, inserted] = index.emplace(name, &named);
    check(inserted, where, ": tensor '", name, "' is stored twice, as '", existing->second->name, "' and '",
          named.name, "'");
  }
  return index;
}

// Takes the tensor `name` out of `index`, checked to be float32 of `shape`.
const Tensor& take(std::map<std::string, const NamedTensor*>& index, const std::string& name, const Shape& shape,
                   const GPTConfig& config, const std::string& where) {
  const auto found = index.find(name);
  check(found != index.end(), where, ": tensor '", name, "' ", shape, " is missing (config.json: ",
        describe_sizes(config), ")");
  const Tensor& tensor = found->second->tensor;
  index.erase(found);
  const DType stored = tensor.dtype();
  check(stored == DType::Float32 || stored == DType::BFloat16 || stored == DType::Float16, where, ": tensor '", name,
        "' is ", dtype_name(stored), "; tinygpt reads GPT-2 weights in F32, BF16 or F16");
  check(tensor.shape() == shape, where, ": tensor '", name, "' is ", tensor.shape(), " in the file but config.json (",
        describe_sizes(config), ") makes it ", shape);
  return tensor;
}

nlohmann::json read_json(const fs::path& path, const std::string& where) {
  const std::string text = read_text_file(path.string());
  try {
    return parse_bounded_json(text, where);
  } catch (const nlohmann::json::exception& error) {
    fail(where, ": not valid JSON: ", json_error_text(error));
  }
}

// Copies a stored tensor into its parameter straight from the mapping, a slab
// of stored rows at a time, and lets each slab's pages go once copied: beside
// the model, the process holds at most one slab of the file (wte alone is a
// third of GPT-2's weights), so about one copy of the weights in all.
void copy_from_mapping(const SafetensorsFile& file, const Tensor& source, const Tensor& parameter, bool transposed) {
  constexpr int64_t kSlabElements = int64_t{1} << 22;  // 16 MB of float32
  const int64_t rows = source.size(0), row_elements = source.numel() / std::max<int64_t>(rows, 1);
  const int64_t slab_rows = std::max<int64_t>(1, kSlabElements / std::max<int64_t>(row_elements, 1));
  for (int64_t first = 0; first < rows; first += slab_rows) {
    const int64_t count = std::min(slab_rows, rows - first);
    const Tensor slab = raw::narrow(source, 0, first, count);  // stored rows: (count, ...)
    if (transposed)  // stored (in, out) rows are columns of the (out, in) parameter
      raw::copy_(raw::narrow(parameter, 1, first, count), raw::transpose(slab, 0, 1));
    else
      raw::copy_(raw::narrow(parameter, 0, first, count), slab);
    file.evict(slab);
  }
}

}  // namespace

bool is_hf_gpt2_directory(const std::string& directory) {
  return fs::is_regular_file(fs::path(directory) / kConfigFile) && fs::is_regular_file(fs::path(directory) / kWeightsFile);
}

std::unique_ptr<GPT> load_hf_gpt2(const std::string& directory) {
  const fs::path config_path = fs::path(directory) / kConfigFile, weights_path = fs::path(directory) / kWeightsFile;
  check(fs::is_directory(directory), "load_hf_gpt2: '", directory, "' is not a directory");
  for (const fs::path& path : {config_path, weights_path}) {
    const bool only_pickle = path == weights_path && fs::exists(fs::path(directory) / "pytorch_model.bin");
    check(fs::is_regular_file(path), "load_hf_gpt2: ", path.string(), " is missing",
          only_pickle ? " (tinygpt reads model.safetensors, not pytorch_model.bin)" : "");
  }
  const std::string config_where = "load_hf_gpt2: " + config_path.string();
  const GPTConfig config = hf_gpt2_config(read_json(config_path, config_where), config_where);

  const std::string where = "load_hf_gpt2: " + weights_path.string();
  const SafetensorsFile file = map_safetensors(weights_path.string());
  std::map<std::string, const NamedTensor*> index = index_tensors(file, where);
  // Before the model is allocated: a config.json describing far more than the
  // file holds (a few bytes of JSON can describe gigabytes) is refused here.
  // Within twice the file, the per-tensor checks below name what differs.
  double stored_bytes = 0;
  for (const NamedTensor& named : file.tensors)
    stored_bytes += static_cast<double>(named.tensor.numel()) * static_cast<double>(dtype_size(named.tensor.dtype()));
  const double described_bytes = static_cast<double>(config.parameter_count()) * sizeof(float);
  check(described_bytes <= 2 * stored_bytes + 64.0 * (1 << 20), where, ": config.json (", describe_sizes(config),
        ") describes ", config.parameter_count(), " parameters, ", described_bytes / 1e6,
        " MB of float32, far more than the file's ", stored_bytes / 1e6, " MB of tensors: the two files do not belong together");
  auto model = std::make_unique<GPT>(config, 0, DType::Float32, /*initialize=*/false);

  // Check every tensor before copying any.
  struct Copy {
    Tensor parameter;
    const Tensor* source;
    bool transposed;
  };
  std::vector<Copy> copies;
  const Tensor* wte = nullptr;
  for (const auto& [name, parameter] : model->named_parameters()) {
    const bool transposed = stored_transposed(name, parameter);
    const Shape stored_shape = transposed ? Shape{parameter.size(1), parameter.size(0)} : parameter.shape();
    copies.push_back({parameter, &take(index, hf_name(name), stored_shape, config, where), transposed});
    if (name == "wte.weight") wte = copies.back().source;
  }
  if (config.tie_embeddings && index.count("lm_head.weight")) {  // a copy of the tied wte.weight, as older files hold
    const Tensor& head = take(index, "lm_head.weight", {config.vocab_size, config.n_embd}, config, where);
    const bool same = head.dtype() == wte->dtype() && visit_any(wte->dtype(), [&]<class T>() {
      return std::memcmp(head.data<T>(), wte->data<T>(), static_cast<size_t>(wte->numel()) * sizeof(T)) == 0;
    });
    check(same, where, ": tensor 'lm_head.weight' differs from 'wte.weight' but config.json ties them",
          " (\"tie_word_embeddings\" is true or absent)");
    file.evict(head);  // read only for the comparison; wte's pages go with its copy below
  }
  if (!index.empty()) {
    const NamedTensor* named = index.begin()->second;
    fail(where, ": unexpected tensor '", named->name, "' ", named->tensor.shape(), index.size() > 1 ? " (and " : "",
         index.size() > 1 ? std::to_string(index.size() - 1) + " more)" : "",
         ": GPT-2 with config.json's sizes (", describe_sizes(config), ") has no such parameter");
  }

  for (const Copy& copy : copies) copy_from_mapping(file, *copy.source, copy.parameter, copy.transposed);
  return model;
}

void export_hf_gpt2(const GPT& model, const std::string& directory) {
  const GPTConfig& config = model.config();
  const std::string where = "export_hf_gpt2: " + directory;
  check(config.bias == nn::BiasMode::All, where, ": GPT-2's layout has biases on every Linear; this model's bias mode is '",
        nn::bias_mode_name(config.bias), "'");
  check(config.transformer_options().plain_attention() && config.norm == nn::NormKind::LayerNorm &&
            config.mlp == nn::MlpKind::Gelu,
        where, ": GPT-2's layout holds GPT-2's block (LayerNorm, GELU MLP, one KV head per head of C / NH); this model's "
        "block is the Llama-style one");
  check(config.positional == PositionalEncoding::Learned, where, ": GPT-2's layout has learned positions; this model's are ",
        positional_encoding_name(config.positional));
  check(!config.scale_embeddings, where, ": GPT-2 does not scale token embeddings by sqrt(C); this model does");
  check(model.dtype() == DType::Float32, where, ": GPT-2's layout holds float32; this model is ",
        dtype_name(model.dtype()));
  std::error_code error;
  fs::create_directories(directory, error);
  check(!error, where, ": cannot create the directory: ", error.message());

  std::vector<NamedTensor> tensors;
  for (const auto& [name, parameter] : model.named_parameters()) {
    const Tensor weights = parameter.detach();
    // save_safetensors writes a transposed view row-major: a contiguous (in, out) tensor in the file.
    tensors.push_back({hf_name(name), stored_transposed(name, weights) ? raw::transpose(weights, 0, 1) : weights});
  }
  save_safetensors((fs::path(directory) / kWeightsFile).string(), tensors, {{"format", "pt"}});
  write_file_atomically((fs::path(directory) / kConfigFile).string(), hf_gpt2_config_json(config).dump(2) + "\n", where);
  fs::remove(fs::path(directory) / kCharVocabularyFile, error);  // an earlier export's, not this model's
  fs::remove(fs::path(directory) / kCharSpecialTokensFile, error);
}

void write_char_vocabulary(const std::string& directory, const tokenizer::CharTokenizer& tokenizer) {
  const std::string where = "export: " + directory;
  write_file_atomically((fs::path(directory) / kCharVocabularyFile).string(), tokenizer.serialize(), where);
  const fs::path special_tokens = fs::path(directory) / kCharSpecialTokensFile;
  if (tokenizer.special_tokens().empty()) {
    std::error_code error;
    fs::remove(special_tokens, error);  // an earlier export's, not this model's
    return;
  }
  write_file_atomically(special_tokens.string(), nlohmann::json(tokenizer.special_tokens()).dump() + "\n", where);
}

std::optional<tokenizer::TextTokenizer> read_char_vocabulary(const std::string& directory) {
  const fs::path path = fs::path(directory) / kCharVocabularyFile;
  if (!fs::exists(path)) return std::nullopt;
  // Checked as a checkpoint's tokenizer is: the same JSON, with the same errors, prefixed with the file's path.
  nlohmann::json json = {{"type", "char"}, {"characters", read_text_file(path.string())}};
  std::string where = path.string();
  const fs::path special_tokens = fs::path(directory) / kCharSpecialTokensFile;
  if (fs::exists(special_tokens)) {
    where = special_tokens.string();
    try {
      json["special_tokens"] = parse_bounded_json(read_text_file(where), where);
    } catch (const nlohmann::json::exception& failure) {
      throw tokenizer::TokenizerError(where + ": not valid JSON: " + json_error_text(failure));
    } catch (const Error& failure) {  // nested too deep
      throw tokenizer::TokenizerError(failure.what());
    }
    // Only an error of the special tokens names this file; one of the characters names char_vocabulary.txt.
    try {
      tokenizer::CharTokenizer::deserialize(json["characters"].get<std::string>());
    } catch (const tokenizer::TokenizerError& failure) {
      throw tokenizer::TokenizerError(path.string() + ": " + failure.what());
    }
  }
  try {
    return tokenizer::TextTokenizer::from_json(json);
  } catch (const tokenizer::TokenizerError& failure) {
    throw tokenizer::TokenizerError(where + ": " + failure.what());
  }
}

}  // namespace tg
