// AdamW (Loshchilov & Hutter 2019) over the parameters of a ParameterArena, in
// two groups:
//
//   decayed:     2-D weights (Linear weights, the token embedding — tied to the
//                LM head, so it decays, as in nanoGPT)
//   not decayed: biases, LayerNorm weights and biases (1-D), and the learned
//                position table wpe.weight unless options.decay_position_embeddings
//
// State: the moments m and v are (P,) float32 buffers in the arena's layout
// (nn/parameter_layout.h), plus the number of steps taken. A step is one loop
// over the arena: the fused nn::adamw_step (nn/functional/adamw.h, which has the
// formulas) once per run of neighbouring parameters of one group, on the same
// stretch of the params, grads, m and v buffers.
#pragma once
#include <string>
#include <vector>

#include "tinygpt/nn/parameter_arena.h"

namespace tg::nn {

// nanoGPT's defaults (train.py).
struct AdamWOptions {
  double lr = 6e-4;
  double beta1 = 0.9;
  double beta2 = 0.95;
  double eps = 1e-8;
  double weight_decay = 0.1;
  bool decay_position_embeddings = false;  // put wpe.weight in the decayed group
};

struct AdamWState {
  Tensor m, v;       // (P,) float32: first and second moments, in the arena's layout
  int64_t step = 0;  // updates taken so far (the next one is step + 1)
};

class AdamW {
 public:
  // The optimiser keeps a reference to the arena, which must outlive it.
  AdamW(const ParameterArena& arena, AdamWOptions options);

  void step();
  void set_lr(double lr) { options_.lr = lr; }
  double lr() const { return options_.lr; }
  const AdamWOptions& options() const { return options_; }
  const ParameterLayout& layout() const { return arena_.layout(); }

  // Whether a parameter belongs to the decayed group (see the top of this file).
  static bool decays(const std::string& name, const Shape& shape, const AdamWOptions& options);
  std::vector<std::string> decayed_names() const;
  std::vector<std::string> undecayed_names() const;

  // The live state (the tensors themselves: a checkpoint writer reads them).
  const AdamWState& state() const { return state_; }
  // Restores a saved state: copies m and v (shape (P,), float32) and sets the step.
  void load_state(const Tensor& m, const Tensor& v, int64_t step);

 private:
  // Neighbouring parameters of one decay group: one adamw_step call.
  struct Run {
    int64_t offset, count;  // in the (P,) buffers
    bool decays;
  };
  std::vector<std::string> names_in_group(bool decayed) const;

  const ParameterArena& arena_;
  AdamWOptions options_;
  std::vector<bool> slot_decays_;  // per layout slot
  std::vector<Run> runs_;
  AdamWState state_;
};

}  // namespace tg::nn
