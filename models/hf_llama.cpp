// Reading and writing the Llama family in the Hugging Face layout
// (models/hf_llama.h; config.json in models/hf_llama_config.cpp).
//
//   tinygpt parameter                   Hugging Face tensors (rows stacked in this order)
//   wte.weight (V, C)                   model.embed_tokens.weight
//   blocks.{i}.ln_1.weight (C)          model.layers.{i}.input_layernorm.weight
//   blocks.{i}.attn.qkv.weight          model.layers.{i}.self_attn.q_proj, k_proj, v_proj .weight (and .bias)
//     ((NH + 2 KVH) HD, C)
//   blocks.{i}.attn.q_norm/k_norm (HD)  model.layers.{i}.self_attn.q_norm/k_norm.weight
//   blocks.{i}.attn.c_proj.weight       model.layers.{i}.self_attn.o_proj.weight (and .bias)
//   blocks.{i}.ln_2.weight (C)          model.layers.{i}.post_attention_layernorm.weight
//   blocks.{i}.mlp.c_fc.weight (2H, C)  model.layers.{i}.mlp.gate_proj, up_proj .weight (and .bias)
//   blocks.{i}.mlp.c_proj.weight (C, H) model.layers.{i}.mlp.down_proj.weight (and .bias)
//   ln_f.weight (C)                     model.norm.weight
//   lm_head.weight (V, C) [untied]      lm_head.weight
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <set>

#include "tinygpt/models/hf_directory.h"
#include "tinygpt/models/hf_llama.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/io/safetensors_directory.h"
#include "tinygpt/tensor/storage.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

namespace fs = std::filesystem;

// One published tensor holding rows [first_row, first_row + rows) of a tinygpt parameter.
struct Piece {
  std::string name;
  int64_t first_row;
  int64_t rows;
};

// The published tensors a tinygpt parameter is made of (table above).
std::vector<Piece> hf_pieces(const std::string& name, const Tensor& parameter, const GPTConfig& config) {
  const int64_t rows = parameter.size(0);
  if (name == "wte.weight") return {{"model.embed_tokens.weight", 0, rows}};
  if (name == "ln_f.weight") return {{"model.norm.weight", 0, rows}};
  if (name == "lm_head.weight") return {{"lm_head.weight", 0, rows}};
  check(name.starts_with("blocks."), "hf_llama: no Hugging Face name for parameter '", name, "'");
  const size_t layer_end = name.find('.', std::strlen("blocks."));
  const std::string layer = "model.layers." + name.substr(std::strlen("blocks."), layer_end - std::strlen("blocks.")) + ".";
  const std::string inside = name.substr(layer_end + 1);                      // "attn.qkv.weight"
  const std::string kind = inside.substr(inside.rfind('.'));                  // ".weight" or ".bias"
  const std::string module = inside.substr(0, inside.size() - kind.size());  // "attn.qkv"
  const int64_t query_rows = config.n_head * config.head_size(), kv_rows = config.kv_heads() * config.head_size();
  const int64_t hidden = config.transformer_options().hidden_size();
  if (module == "ln_1") return {{layer + "input_layernorm" + kind, 0, rows}};
  if (module == "ln_2") return {{layer + "post_attention_layernorm" + kind, 0, rows}};
  if (module == "attn.q_norm") return {{layer + "self_attn.q_norm" + kind, 0, rows}};
  if (module == "attn.k_norm") return {{layer + "self_attn.k_norm" + kind, 0, rows}};
  if (module == "attn.c_proj") return {{layer + "self_attn.o_proj" + kind, 0, rows}};
  if (module == "attn.qkv")
    return {{layer + "self_attn.q_proj" + kind, 0, query_rows},
            {layer + "self_attn.k_proj" + kind, query_rows, kv_rows},
            {layer + "self_attn.v_proj" + kind, query_rows + kv_rows, kv_rows}};
  if (module == "mlp.c_fc") return {{layer + "mlp.gate_proj" + kind, 0, hidden}, {layer + "mlp.up_proj" + kind, hidden, hidden}};
  if (module == "mlp.c_proj") return {{layer + "mlp.down_proj" + kind, 0, rows}};
  fail("hf_llama: no Hugging Face name for parameter '", name, "'");
}

Shape piece_shape(const Tensor& parameter, const Piece& piece) {
  Shape shape = parameter.shape();
  shape[0] = piece.rows;
  return shape;
}

std::string describe_sizes(const GPTConfig& config) {
  return "num_hidden_layers " + std::to_string(config.n_layer) + ", hidden_size " + std::to_string(config.n_embd) +
         ", num_attention_heads " + std::to_string(config.n_head) + ", num_key_value_heads " +
         std::to_string(config.kv_heads()) + ", head_dim " + std::to_string(config.head_size()) + ", intermediate_size " +
         std::to_string(config.transformer_options().hidden_size()) + ", vocab_size " + std::to_string(config.vocab_size);
}

// Rotary tables some older files carry ("model.layers.0.self_attn.rotary_emb.inv_freq"): rebuilt from
// rope_theta, not parameters.
bool is_rotary_buffer(const std::string& name) { return name.ends_with(".rotary_emb.inv_freq"); }

struct Copy {
  Tensor destination;  // rows of a parameter: (rows, ...)
  const SafetensorsDirectory::Located* source;
};

// Copies (and converts: F32, BF16 and F16 to the parameter's float32 or bfloat16)
// a slab of rows at a time, letting each slab's pages of the mapping go once copied.
void copy_rows(const Copy& copy) {
  constexpr int64_t kSlabElements = int64_t{1} << 22;
  const Tensor& source = *copy.source->tensor;
  const int64_t rows = source.size(0), row_elements = source.numel() / std::max<int64_t>(rows, 1);
  const int64_t slab_rows = std::max<int64_t>(1, kSlabElements / std::max<int64_t>(row_elements, 1));
  for (int64_t first = 0; first < rows; first += slab_rows) {
    const int64_t count = std::min(slab_rows, rows - first);
    const Tensor slab = raw::narrow(source, 0, first, count);
    raw::copy_(raw::narrow(copy.destination, 0, first, count), slab);
    copy.source->file->evict(slab);
  }
}

}  // namespace

LoadedHfModel load_hf_llama(const std::string& directory, DType weight_format) {
  check(weight_format == DType::Float32 || weight_format == DType::BFloat16, "load_hf_llama: weights load as float32 or ",
        "bfloat16, not ", dtype_name(weight_format));
  const std::string config_where = (fs::path(directory) / kHfConfigFile).string();
  HfLlamaConfig parsed = hf_llama_config(read_hf_config_json(directory), config_where);
  const GPTConfig& config = parsed.config;

  const SafetensorsDirectory weights = map_safetensors_directory(directory);
  const std::string& where = weights.source;
  // Before the model is allocated: a config.json describing far more than the files hold (a few bytes of
  // JSON can describe gigabytes) is refused here. Within twice the files (at 2 bytes a parameter, the
  // least a published format takes), the per-tensor checks below name what differs.
  const double described_bytes = static_cast<double>(config.parameter_count()) * 2;
  check(described_bytes <= 2 * weights.stored_bytes() + 64.0 * (1 << 20), where, ": config.json (", describe_sizes(config),
        ") describes ", config.parameter_count(), " parameters, far more than the ", weights.stored_bytes() / 1e6,
        " MB of tensors hold: the files do not belong together");

  auto model = std::make_unique<GPT>(config, 0, DType::Float32, /*initialize=*/false);
  if (weight_format == DType::BFloat16) {
    // bfloat16 matrices of zeros, filled from the file below: the float32 ones are never read or written.
    model->quantize(DType::BFloat16, QuantizedValues::Zeros);
    Storage::release_cached();
  }

  // Check every tensor before copying any.
  std::vector<Copy> copies;
  std::set<std::string> used;
  for (const auto& [name, parameter] : model->named_parameters()) {
    for (const Piece& piece : hf_pieces(name, parameter, config)) {
      const Shape shape = piece_shape(parameter, piece);
      const SafetensorsDirectory::Located* located = weights.find(piece.name);
      check(located != nullptr, where, ": tensor '", piece.name, "' ", shape, " is missing (", parsed.info.architecture,
            " with config.json's ", describe_sizes(config), ")");
      const DType stored = located->tensor->dtype();
      check(stored == DType::Float32 || stored == DType::BFloat16 || stored == DType::Float16, where, ": tensor '",
            piece.name, "' is ", dtype_name(stored), "; weights are read in F32, BF16 or F16");
      check(located->tensor->shape() == shape, where, ": tensor '", piece.name, "' is ", located->tensor->shape(),
            " in the file but config.json (", describe_sizes(config), ") makes it ", shape);
      copies.push_back({raw::narrow(parameter, 0, piece.first_row, piece.rows), located});
      used.insert(piece.name);
    }
  }
  if (config.tie_embeddings && weights.find("lm_head.weight")) {  // a copy of the tied table, as some files hold
    const Tensor& head = *weights.find("lm_head.weight")->tensor;
    const Tensor& table = *weights.find("model.embed_tokens.weight")->tensor;
    const bool same = head.dtype() == table.dtype() && head.shape() == table.shape() && visit_any(table.dtype(), [&]<class T>() {
      return std::memcmp(head.data<T>(), table.data<T>(), static_cast<size_t>(table.numel()) * sizeof(T)) == 0;
    });
    check(same,
          where, ": tensor 'lm_head.weight' differs from 'model.embed_tokens.weight' but config.json ties them (\"tie_word_embeddings\": true)");
    used.insert("lm_head.weight");
  }
  for (const auto& [name, located] : weights.tensors) {
    if (used.contains(name) || is_rotary_buffer(name)) continue;
    fail(where, ": unexpected tensor '", name, "' ", located.tensor->shape(), ": ", parsed.info.architecture,
         " with config.json's sizes (", describe_sizes(config), ") has no such parameter");
  }

  for (const Copy& copy : copies) copy_rows(copy);
  if (weight_format != DType::Float32) model->check_quantized_weights();
  return {std::move(model), std::move(parsed.info)};
}

void export_hf_llama(const GPT& model, const HfModelInfo& info, const std::string& directory, DType stored) {
  const GPTConfig& config = model.config();
  const std::string where = "export: " + directory;
  check(stored == DType::Float32 || stored == DType::BFloat16, where, ": the layout is written in float32 or bfloat16, not ",
        dtype_name(stored));
  check(config.norm == nn::NormKind::RMSNorm && config.norm_weight, where,
        ": the Llama layout has RMSNorm with weights; this model's norm is ", nn::norm_kind_name(config.norm),
        config.norm_weight ? "" : " without weights");
  check(config.mlp == nn::MlpKind::SwiGLU, where, ": the Llama layout has the SwiGLU MLP; this model's is ",
        nn::mlp_kind_name(config.mlp));
  check(config.positional == PositionalEncoding::Rope && config.rope_pairing == nn::RopePairing::Half, where,
        ": the Llama layout rotates the two halves of each head (rope_pairing half); this model has ",
        config.positional == PositionalEncoding::Rope ? "interleaved RoPE pairs"
                                                      : positional_encoding_name(config.positional) + std::string(" positions"));
  check(!config.scale_embeddings, where, ": the Llama layout does not scale token embeddings by sqrt(C); this model does");
  check(!(config.qk_norm && config.bias == nn::BiasMode::Qkv), where,
        ": no published layout has both QK-norm (Qwen3) and q/k/v-only biases (Qwen2)");
  check(model.dtype() == DType::Float32, where, ": the model is ", dtype_name(model.dtype()), "; export takes float32 models");
  check(model.weight_format() == DType::Float32 || model.weight_format() == DType::BFloat16, where, ": ",
        dtype_name(model.weight_format()), " weights have no place in the layout (export float32 or bfloat16 weights)");
  std::error_code error;
  fs::create_directories(directory, error);
  check(!error, where, ": cannot create the directory: ", error.message());

  std::vector<NamedTensor> tensors;
  for (const auto& [name, parameter] : model.named_parameters()) {
    const Tensor weights = parameter.detach();
    for (const Piece& piece : hf_pieces(name, weights, config)) {
      const Tensor rows = raw::narrow(weights, 0, piece.first_row, piece.rows);
      tensors.push_back({piece.name, rows.dtype() == stored ? rows : raw::to_dtype(rows, stored)});
    }
  }
  save_safetensors((fs::path(directory) / kSafetensorsFileName).string(), tensors, {{"format", "pt"}});
  write_file_atomically((fs::path(directory) / kHfConfigFile).string(),
                        hf_llama_config_json(config, info, stored).dump(2) + "\n", where);
}

}  // namespace tg
