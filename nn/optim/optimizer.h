// The optimiser of a training run, by parameter role:
//
//   adamw   AdamW for every parameter (nn/optim/adamw.h)
//   muon    Muon for the hidden matrices: the blocks' 2-D weights (nn/optim/muon.h);
//           AdamW for the rest: embeddings, the output head, norms, biases
//
// One learning-rate schedule drives both groups: set_lr takes AdamW's rate of
// the step, and Muon's peak rate is scaled by the same fraction of AdamW's peak.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/nn/optim/adamw.h"
#include "tinygpt/nn/optim/muon.h"

namespace tg::nn {

class Optimizer {
 public:
  // AdamW alone.
  Optimizer(const ParameterArena& arena, AdamWOptions adamw);
  // Muon on `matrices`, AdamW on every other parameter.
  Optimizer(const ParameterArena& arena, AdamWOptions adamw, std::vector<MuonMatrix> matrices, MuonOptions muon);

  void step();
  void set_lr(double adamw_lr);
  const char* name() const { return muon_ ? "muon" : "adamw"; }  // as checkpoints record it

  const AdamW& adamw() const { return *adamw_; }
  const Muon* muon() const { return muon_.get(); }
  int64_t step_count() const { return adamw_->state().step; }
  void set_step_count(int64_t steps) { adamw_->set_step(steps); }

  // Every state tensor under its checkpoint name (AdamW's moments, Muon's momentum).
  std::vector<NamedTensor> state_tensors() const;

 private:
  double adamw_peak_lr_, muon_peak_lr_ = 0;
  std::unique_ptr<AdamW> adamw_;
  std::unique_ptr<Muon> muon_;
};

}  // namespace tg::nn
