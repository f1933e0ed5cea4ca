#include "tinygpt/nn/optim/optimizer.h"

namespace tg::nn {

Optimizer::Optimizer(const ParameterArena& arena, AdamWOptions adamw)
    : adamw_peak_lr_(adamw.lr), adamw_(std::make_unique<AdamW>(arena, adamw)) {}

Optimizer::Optimizer(const ParameterArena& arena, AdamWOptions adamw, std::vector<MuonMatrix> matrices, MuonOptions muon)
    : adamw_peak_lr_(adamw.lr), muon_peak_lr_(muon.lr), muon_(std::make_unique<Muon>(arena, std::move(matrices), muon)) {
  adamw_ = std::make_unique<AdamW>(arena, adamw, muon_->names());
}

void Optimizer::step() {
  adamw_->step();
  if (muon_) muon_->step();
}

void Optimizer::set_lr(double adamw_lr) {
  adamw_->set_lr(adamw_lr);
  if (muon_) muon_->set_lr(adamw_peak_lr_ > 0 ? muon_peak_lr_ * adamw_lr / adamw_peak_lr_ : 0.0);
}

std::vector<NamedTensor> Optimizer::state_tensors() const {
  std::vector<NamedTensor> tensors = adamw_->state_tensors();
  if (muon_) {
    const std::vector<NamedTensor> momentum = muon_->state_tensors();
    tensors.insert(tensors.end(), momentum.begin(), momentum.end());
  }
  return tensors;
}

}  // namespace tg::nn
