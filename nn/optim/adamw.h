// AdamW (Loshchilov & Hutter 2019) over the parameters of a ParameterArena, in
// two groups:
//
//   decayed:     2-D weights (Linear weights, the token embedding — tied to the
//                LM head, so it decays, as in nanoGPT)
//   not decayed: biases, LayerNorm weights and biases (1-D), and the learned
//                position table wpe.weight unless options.decay_position_embeddings
//
// Parameters another optimiser updates (Muon's hidden matrices, nn/optim/muon.h)
// can be left out: AdamW then neither moves them nor keeps moments for them.
//
// State: the moments m and v are (Q,) float32 buffers, Q the elements of the
// parameters AdamW updates (P, the whole arena, unless some are left out), in
// the arena's order (nn/parameter_layout.h), plus the number of steps taken. A
// step is one loop over the arena: the fused nn::adamw_step
// (nn/functional/adamw.h, which has the formulas) once per run of neighbouring
// parameters of one group, on the matching stretches of the params, grads, m
// and v buffers.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/io/safetensors.h"

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
  Tensor m, v;       // (Q,) float32: first and second moments of the parameters AdamW updates
  int64_t step = 0;  // updates taken so far (the next one is step + 1)
};

class AdamW {
 public:
  // The optimiser keeps a reference to the arena, which must outlive it. The
  // parameters named in `left_out` are not AdamW's (each must be in the arena).
  AdamW(const ParameterArena& arena, AdamWOptions options, const std::set<std::string>& left_out = {});

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
  // Each updated parameter's stretch of m and v, viewed in its shape, named
  // "optimizer.m.<name>" and "optimizer.v.<name>": what a checkpoint saves, and
  // where a restore copies the saved moments to.
  std::vector<NamedTensor> state_tensors() const;
  // Restores a saved state: copies m and v (shape (Q,), float32) and sets the step.
  void load_state(const Tensor& m, const Tensor& v, int64_t step);
  void set_step(int64_t step);

 private:
  // Neighbouring parameters of one decay group: one adamw_step call.
  struct Run {
    int64_t offset, state_offset, count;  // in the (P,) arena buffers and the (Q,) moments
    bool decays;
  };
  std::vector<std::string> names_in_group(bool decayed) const;

  const ParameterArena& arena_;
  AdamWOptions options_;
  std::vector<bool> slot_decays_;  // per layout slot
  std::vector<int64_t> slot_state_offsets_;  // per layout slot: where its moments start in m and v; -1: left out
  std::vector<Run> runs_;
  AdamWState state_;
};

}  // namespace tg::nn
