// ParameterArena: every parameter of a model in one contiguous buffer, every
// gradient in a second one (as llm.c does), both laid out by one ParameterLayout.
//
// Building the arena copies each parameter into the params buffer and rebinds
// the parameter's own tensor to its place there (Tensor::rebind_to), so every
// handle the layers hold sees the move; each parameter's .grad becomes the
// matching view of the zero-filled grads buffer. tg::backward adds into an
// existing .grad in place, so after a backward the whole gradient is already in
// one buffer: zero_grad, the global gradient norm (nn/optim/clip.h), clipping and
// AdamW (nn/optim/adamw.h) are each one loop over (P,), and optimiser state and
// checkpoints carve their per-parameter views from the same layout().
//
// Only the parameters that require a gradient are gathered: the frozen weights
// beside LoRA adapters (nn/lora.h) stay where they are, with no gradient and no
// optimiser state.
//
// Keep the views: tg::zero_grad(tensors) would drop them (use zero_grad() here or
// Module::zero_grad, which zero-fill).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/nn/module.h"
#include "tinygpt/nn/parameter_layout.h"

namespace tg::nn {

class ParameterArena {
 public:
  // All trainable parameters must share one floating dtype (the buffers take it).
  explicit ParameterArena(Module& module);
  // The arena rebinds the module's parameters to its buffers: it must not move.
  ParameterArena(const ParameterArena&) = delete;
  ParameterArena& operator=(const ParameterArena&) = delete;

  Tensor params() const { return params_; }  // (P,)
  Tensor grads() const { return grads_; }    // (P,)
  const ParameterLayout& layout() const { return layout_; }
  const std::vector<std::pair<std::string, Tensor>>& named_parameters() const { return named_parameters_; }
  // Where each parameter starts in the buffers (same order as named_parameters()).
  std::vector<int64_t> offsets() const;

  void zero_grad();

 private:
  std::vector<std::pair<std::string, Tensor>> named_parameters_;
  ParameterLayout layout_;
  Tensor params_, grads_;
};

}  // namespace tg::nn
