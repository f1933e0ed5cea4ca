// The optimiser a run's settings ask for (TrainSettings::optimizer), with its
// parameter groups by role, and the sentence the run header shows for them.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/models/gpt_config.h"
#include "tinygpt/nn/optim/optimizer.h"
#include "tinygpt/training/train_settings.h"

namespace tg {

// The blocks' 2-D weights, Muon's: attention's fused qkv (row blocks q, k, v),
// its output projection, the MLP's c_fc (gate, up for SwiGLU) and c_proj.
std::vector<nn::MuonMatrix> hidden_matrices(const GPTConfig& config);

std::unique_ptr<nn::Optimizer> make_optimizer(const nn::ParameterArena& arena, const GPTConfig& config,
                                              const TrainSettings& settings);

// "AdamW (lr 1e-3, ...) on all 10.65M trained parameters" (a LoRA run's adapters only) or "Muon (lr 0.02, ...) on 24
// hidden matrices (10.6M); AdamW (lr 1e-3, ...) on embeddings, head, norms and biases (25k)".
std::string describe_optimizer(const nn::Optimizer& optimizer);

}  // namespace tg
