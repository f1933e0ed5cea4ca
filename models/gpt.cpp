#include "tinygpt/models/gpt.h"

#include "tinygpt/models/memory_check.h"

#include <cmath>
#include <functional>
#include <sstream>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/models/memory_check.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/module_list.h"
#include "tinygpt/nn/quantize.h"

namespace tg {

namespace {

constexpr double kGpt2InitStd = 0.02;
// The dropout stream is seeded apart from the initialisation stream.
constexpr uint64_t kDropoutSeedSalt = 0x9E3779B97F4A7C15ULL;

}  // namespace

GPT::GPT(const GPTConfig& config, uint64_t seed, DType dtype, bool initialize)
    : config_(config), dtype_(dtype), dropout_generator_(std::make_shared<Generator>(seed ^ kDropoutSeedSalt)) {
  config.validate();
  check(is_floating(dtype), "GPT: dtype must be floating, got ", dtype_name(dtype));
  check_model_fits(config);
  const nn::TransformerOptions options = config.transformer_options(dtype);
  wte_ = register_module("wte", std::make_shared<nn::Embedding>(config.vocab_size, config.n_embd, dtype));
  if (config.positional == PositionalEncoding::Learned)
    wpe_ = register_module("wpe", std::make_shared<nn::LearnedPositions>(config.block_size, config.n_embd, dtype));
  else if (config.positional == PositionalEncoding::Sinusoidal)
    wpe_ = register_module("wpe", std::make_shared<nn::SinusoidalPositions>(config.block_size, config.n_embd, dtype));
  dropout_ = register_module("dropout", std::make_shared<nn::Dropout>(config.dropout, dropout_generator_));
  auto blocks = register_module("blocks", std::make_shared<nn::ModuleList>());
  for (int64_t layer = 0; layer < config.n_layer; ++layer)
    blocks_.push_back(blocks->append(std::make_shared<nn::Block>(options, dropout_generator_)));
  ln_f_ = register_module("ln_f", nn::make_normalization(options, config.n_embd));
  if (!config.tie_embeddings) {
    lm_head_ = register_module("lm_head", std::make_shared<nn::Linear>(config.n_embd, config.vocab_size, false, dtype));
    lm_head_->set_profile_role("lm_head");
  }
  if (initialize) initialize_parameters(seed);
}

void GPT::initialize_parameters(uint64_t seed) {
  Generator generator(seed);
  const int64_t branches = config_.n_layer * (config_.mlp == nn::MlpKind::None ? 1 : 2);
  const double residual_std = kGpt2InitStd / std::sqrt(static_cast<double>(std::max<int64_t>(branches, 1)));
  for (const auto& [name, parameter] : named_parameters()) {
    if (parameter.dim() == 1) {  // biases 0, LayerNorm weights 1
      nn::init::constant_(parameter, name.ends_with(".bias") ? 0.0 : 1.0);
    } else if (config_.init == InitScheme::XavierUniform) {
      nn::init::xavier_uniform_(parameter, generator);
    } else if (config_.init == InitScheme::XavierNormal) {
      nn::init::xavier_normal_(parameter, generator);
    } else {
      // GPT-2: each block adds two residual branches (one without an MLP), so their output projections
      // are scaled down to keep the residual stream's variance from growing with depth.
      nn::init::normal_(parameter, 0.0, name.ends_with("c_proj.weight") ? residual_std : kGpt2InitStd, generator);
    }
  }
}

void GPT::check_ids(const Tensor& ids, const char* op) const {
  check(ids.dtype() == DType::Int64, op, ": ids must be int64, got ", dtype_name(ids.dtype()));
  check(ids.dim() == 2 && ids.size(0) > 0 && ids.size(1) > 0, op, ": ids must be (B, T) with B, T >= 1, got shape ",
        ids.shape());
  const std::vector<int64_t> values = ids.to_vector<int64_t>();
  const int64_t time = ids.size(1);
  for (size_t i = 0; i < values.size(); ++i)
    check(values[i] >= 0 && values[i] < config_.vocab_size, op, ": token id ", values[i], " at position (",
          static_cast<int64_t>(i) / time, ", ", static_cast<int64_t>(i) % time, ") is outside the vocabulary [0, ",
          config_.vocab_size, ")");
}

Tensor GPT::embed(const Tensor& ids, int64_t offset) const {
  Tensor x = wte_->forward(ids);  // (B, T, C)
  if (config_.scale_embeddings) x = x * std::sqrt(static_cast<double>(config_.n_embd));
  if (wpe_) x = add(x, wpe_->forward(ids.size(1), offset));  // (B, T, C) + (T, C)
  return dropout_->forward(x);
}

Tensor GPT::logits_rows(const Tensor& x) const {
  const Tensor rows = view(ln_f_->forward(x), {-1, config_.n_embd});  // (B*T, C), a view
  if (lm_head_) return lm_head_->forward(rows);                       // (B*T, V)
  if (wte_->is_quantized()) return nn::linear(rows, wte_->quantized_weight(), Tensor());
  return linear_product(rows, wte_->weight(), "lm_head", matmul_dtype_);  // (B*T, C) @ (V, C)^T -> (B*T, V)
}

void GPT::set_matmul_dtype(DType dtype) {
  check(dtype == DType::Float32 || dtype == DType::BFloat16, "GPT::set_matmul_dtype: float32 or bfloat16, not ",
        dtype_name(dtype));
  check(weight_format() == DType::Float32, "GPT::set_matmul_dtype: the weights are ", dtype_name(weight_format()),
        "; mixed precision trains a float32 model");
  // Every Linear, wherever it sits in the tree.
  const std::function<void(nn::Module&)> visit = [&](nn::Module& module) {
    if (auto* linear = dynamic_cast<nn::Linear*>(&module)) linear->set_matmul_dtype(dtype);
    for (const auto& [name, child] : module.children()) visit(*child);
  };
  visit(*this);
  matmul_dtype_ = dtype;
}

void GPT::reseed_dropout(uint64_t seed) { dropout_generator_->set_state(seed ^ kDropoutSeedSalt, 0); }

void GPT::quantize(DType format, QuantizedValues values) {
  check(weight_format() == DType::Float32, "GPT::quantize: the weights are ", dtype_name(weight_format()),
        "; only a float32 model is quantized");
  nn::quantize_weights(*this, format, values);
}

void GPT::check_quantized_weights() const {
  for (const auto& [name, matrix] : nn::quantized_weights(*this)) check_quantized_matrix(matrix, name);
}

Tensor GPT::logits(const Tensor& x, LogitPositions positions) const {
  const Tensor rows = positions == LogitPositions::Last ? narrow(x, 1, x.size(1) - 1, 1) : x;  // (B, T or 1, C)
  return view(logits_rows(rows), {rows.size(0), rows.size(1), config_.vocab_size});           // (B, T or 1, V)
}

Tensor GPT::forward(const Tensor& ids, LogitPositions positions) {
  check_ids(ids, "GPT::forward");
  const int64_t time = ids.size(1);
  check(time <= config_.block_size, "GPT::forward: sequence of ", time, " tokens is longer than block_size ",
        config_.block_size);
  Tensor x = embed(ids, 0);  // (B, T, C)
  for (const std::shared_ptr<nn::Block>& block : blocks_) {
    if (!activation_checkpointing_) {
      x = block->forward(x);  // (B, T, C)
      continue;
    }
    // The dropout generator is rewound for the recompute, so the masks are the same.
    x = activation_checkpoint([block](const Tensor& input) { return block->forward(input); }, x,
                              dropout_generator_);  // (B, T, C)
  }
  return logits(x, positions);
}

Tensor GPT::loss(const Tensor& ids, const Tensor& targets) {
  check(targets.dtype() == DType::Int64 && targets.shape() == ids.shape(), "GPT::loss: targets must be int64 of the ids' shape ",
        ids.shape(), ", got ", dtype_name(targets.dtype()), " ", targets.shape());
  const Tensor logits = forward(ids);  // (B, T, V)
  return nn::cross_entropy(view(logits, {-1, config_.vocab_size}), reshape(targets, {-1}));  // (B*T, V), (B*T)
}

std::string GPT::describe() const {
  std::ostringstream text;
  text << "GPT(preset=" << config_.preset << ", vocab=" << config_.vocab_size << ", block=" << config_.block_size
       << ", layers=" << config_.n_layer << ", heads=" << config_.n_head;
  if (config_.kv_heads() != config_.n_head) text << ", kv_heads=" << config_.kv_heads();
  text << ", embd=" << config_.n_embd;
  if (config_.head_size() * config_.n_head != config_.n_embd) text << ", head_dim=" << config_.head_size();
  if (config_.norm != nn::NormKind::LayerNorm) text << ", norm=" << nn::norm_kind_name(config_.norm);
  if (config_.mlp != nn::MlpKind::Gelu) text << ", mlp=" << nn::mlp_kind_name(config_.mlp);
  if (config_.qk_norm) text << ", qk_norm";
  text << ", positional=" << positional_encoding_name(config_.positional)
       << (config_.tie_embeddings ? ", tied" : ", untied") << ", " << dtype_name(dtype_);
  if (is_quantized_format(weight_format())) text << ", weights " << dtype_name(weight_format());
  text << ")";
  return text.str();
}

std::ostream& operator<<(std::ostream& out, const GPT& model) {
  nn::print_tree(out, model);
  const int64_t count = model.parameter_count();
  std::ostringstream millions;
  millions.precision(2);
  millions << std::fixed << static_cast<double>(count) / 1e6;
  return out << "parameters: " << count << " (" << millions.str() << "M)\n";
}

}  // namespace tg
