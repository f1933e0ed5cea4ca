// Muon over the hidden weight matrices of a ParameterArena (the formulas:
// nn/functional/muon.h). The other parameters (embeddings, the output head,
// norms, biases) are AdamW's: nn/optim/optimizer.h puts the two together.
//
// A matrix may be several products stacked in one parameter (attention's fused
// q, k and v rows; SwiGLU's gate and up rows): each block of rows is
// orthogonalised on its own, as if it were its own Linear, since each is its
// own map of the input.
//
// State: the momentum buffers, back to back in a (M,) float32 buffer (M, the
// matrices' elements), in the order of the matrices given. A step updates each
// block on one thread (blocks spread over the threads, largest first), so its
// numbers do not depend on the thread count.
#pragma once
#include <set>
#include <string>
#include <vector>

#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/io/safetensors.h"

namespace tg::nn {

// The reference implementation's defaults (KellerJordan/Muon).
struct MuonOptions {
  double lr = 0.02;
  double momentum = 0.95;
  double weight_decay = 0.0;  // decoupled: p *= 1 - lr * weight_decay
  int64_t ns_steps = 5;       // Newton-Schulz iterations
  bool nesterov = true;
  bool bf16_products = false;  // the Newton-Schulz products with bfloat16 operands (nn/functional/muon.h)
};

struct MuonMatrix {
  std::string name;                 // a 2-D parameter of the arena
  std::vector<int64_t> row_blocks;  // the rows of each stacked product, summing to the parameter's; empty: one
};

class Muon {
 public:
  // The optimiser keeps a reference to the arena, which must outlive it.
  // Throws tg::Error for a name not in the arena, a parameter that is not 2-D,
  // or row blocks that do not add up to its rows.
  Muon(const ParameterArena& arena, std::vector<MuonMatrix> matrices, MuonOptions options);

  void step();
  void set_lr(double lr) { options_.lr = lr; }
  const MuonOptions& options() const { return options_; }
  const std::vector<MuonMatrix>& matrices() const { return matrices_; }
  std::set<std::string> names() const;
  int64_t element_count() const { return momentum_.numel(); }  // M

  // Each matrix's momentum, in its shape, named "optimizer.momentum.<name>".
  std::vector<NamedTensor> state_tensors() const;

 private:
  struct Block {
    int64_t param_offset, state_offset, rows, cols;
  };

  const ParameterArena& arena_;
  std::vector<MuonMatrix> matrices_;
  std::vector<size_t> slots_;           // per matrix: its slot in the arena's layout
  std::vector<int64_t> state_offsets_;  // per matrix
  std::vector<Block> blocks_;           // largest first
  MuonOptions options_;
  Tensor momentum_;  // (M,)
  double newton_schulz_flops_ = 0;  // of one step, for the profile
};

}  // namespace tg::nn
