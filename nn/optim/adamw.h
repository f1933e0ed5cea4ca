// AdamW (Loshchilov & Hutter 2019) over a model's parameters, in two groups:
//
//   decayed:     2-D weights (Linear weights, the token embedding — tied to the
//                LM head, so it decays, as in nanoGPT)
//   not decayed: biases, LayerNorm weights and biases (1-D), and the learned
//                position table wpe.weight unless options.decay_position_embeddings
//
// Each parameter is one call of the fused nn::adamw_step (nn/functional/adamw.h,
// which has the formulas), with its group's weight decay.
//
// State, for checkpoints: m and v are flat (P,) float32 tensors laid out like a
// ParameterArena (parameters back to back in named_parameters() order), plus the
// number of steps taken. Parameters without a gradient are skipped (their m and v
// stay as they are).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "nn/parameter_arena.h"

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
  Tensor m, v;       // (P,) float32: first and second moments
  int64_t step = 0;  // updates taken so far (the next one is step + 1)
};

class AdamW {
 public:
  AdamW(std::vector<std::pair<std::string, Tensor>> named_parameters, AdamWOptions options);
  AdamW(const ParameterArena& arena, AdamWOptions options);

  void step();
  void set_lr(double lr) { options_.lr = lr; }
  double lr() const { return options_.lr; }
  const AdamWOptions& options() const { return options_; }

  // Whether a parameter belongs to the decayed group (see the top of this file).
  static bool decays(const std::string& name, const Tensor& parameter, const AdamWOptions& options);
  std::vector<std::string> decayed_names() const;
  std::vector<std::string> undecayed_names() const;

  // The live state (the tensors themselves: a checkpoint writer reads them).
  const AdamWState& state() const { return state_; }
  // Restores a saved state: copies m and v (shape (P,), float32) and sets the step.
  void load_state(const Tensor& m, const Tensor& v, int64_t step);

 private:
  struct Slot {
    std::string name;
    Tensor parameter;
    int64_t offset;  // into m and v
    bool decays;
  };
  std::vector<Slot> slots_;
  AdamWOptions options_;
  AdamWState state_;
};

}  // namespace tg::nn
