#include "tinygpt/training/optimizer_setup.h"

#include <cstdio>

namespace tg {

std::vector<nn::MuonMatrix> hidden_matrices(const GPTConfig& config) {
  const nn::TransformerOptions options = config.transformer_options();
  const int64_t head_size = config.head_size(), hidden = options.hidden_size();
  std::vector<nn::MuonMatrix> matrices;
  for (int64_t layer = 0; layer < config.n_layer; ++layer) {
    const std::string block = "blocks." + std::to_string(layer) + ".";
    matrices.push_back({block + "attn.qkv.weight",
                        {config.n_head * head_size, config.kv_heads() * head_size, config.kv_heads() * head_size}});
    matrices.push_back({block + "attn.c_proj.weight", {}});
    if (config.mlp == nn::MlpKind::None) continue;
    matrices.push_back({block + "mlp.c_fc.weight",
                        config.mlp == nn::MlpKind::SwiGLU ? std::vector<int64_t>{hidden, hidden} : std::vector<int64_t>{}});
    matrices.push_back({block + "mlp.c_proj.weight", {}});
  }
  return matrices;
}

namespace {

nn::AdamWOptions adamw_options(const TrainSettings& settings) {
  nn::AdamWOptions options;
  options.lr = settings.lr;
  options.beta1 = settings.beta1;
  options.beta2 = settings.beta2;
  options.eps = settings.eps;
  options.weight_decay = settings.weight_decay;
  options.decay_position_embeddings = true;  // every 2-D weight decays, as in nanoGPT
  return options;
}

std::string number(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

std::string parameters_in_millions(int64_t count) {
  char text[32];
  if (count >= 100000) std::snprintf(text, sizeof text, "%.2fM", static_cast<double>(count) / 1e6);
  else std::snprintf(text, sizeof text, "%lld", static_cast<long long>(count));
  return text;
}

}  // namespace

std::unique_ptr<nn::Optimizer> make_optimizer(const nn::ParameterArena& arena, const GPTConfig& config,
                                              const TrainSettings& settings) {
  if (settings.optimizer == "adamw") return std::make_unique<nn::Optimizer>(arena, adamw_options(settings));
  nn::MuonOptions muon;
  muon.lr = settings.muon_lr;
  muon.momentum = settings.muon_momentum;
  muon.weight_decay = settings.muon_weight_decay;
  muon.ns_steps = settings.muon_ns_steps;
  muon.bf16_products = settings.bf16_matmul == 1;  // a --dtype bf16 run's products are all bfloat16's
  return std::make_unique<nn::Optimizer>(arena, adamw_options(settings), hidden_matrices(config), muon);
}

std::string describe_optimizer(const nn::Optimizer& optimizer) {
  const nn::AdamWOptions& adamw = optimizer.adamw().options();
  const int64_t adamw_count = optimizer.adamw().state().m.numel();
  const std::string adamw_text = "AdamW (lr " + number(adamw.lr) + ", betas " + number(adamw.beta1) + ", " +
                                 number(adamw.beta2) + ", weight decay " + number(adamw.weight_decay) + ")";
  const nn::Muon* muon = optimizer.muon();
  if (!muon) return adamw_text + " on all " + parameters_in_millions(adamw_count) + " trained parameters";
  const nn::MuonOptions& options = muon->options();
  return "Muon (lr " + number(options.lr) + ", momentum " + number(options.momentum) +
         (options.nesterov ? " Nesterov" : "") + ", " + std::to_string(options.ns_steps) +
         (options.bf16_products ? " bf16" : "") + " Newton-Schulz steps, weight decay " + number(options.weight_decay) +
         ") on " +
         std::to_string(muon->matrices().size()) + " hidden matrices (" + parameters_in_millions(muon->element_count()) +
         "); " + adamw_text + " on the embeddings, head, norms and biases (" + parameters_in_millions(adamw_count) + ")";
}

}  // namespace tg
