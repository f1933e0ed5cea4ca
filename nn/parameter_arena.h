// ParameterArena: every parameter of a model in one contiguous buffer, every
// gradient in a second one (as llm.c does).
//
// Building the arena copies each parameter into the params buffer and re-points
// the parameter's own tensor at it, so every handle the layers hold sees the
// move; each parameter's .grad becomes the matching view of the (zero-filled)
// grads buffer. tg::backward adds into an existing .grad in place, so after a
// backward the whole gradient is already in one buffer: zero_grad, the global
// gradient norm, AdamW and checkpoint writing are each one loop over (P,).
//
// Layout: parameters back to back in named_parameters() order, no padding, so
// params() has exactly module.parameter_count() elements.
//
// Keep the views: tg::zero_grad(tensors) would drop them (use zero_grad() here or
// Module::zero_grad, which zero-fill).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "nn/module.h"

namespace tg::nn {

class ParameterArena {
 public:
  // All parameters must share one floating dtype (the buffers take it).
  explicit ParameterArena(Module& module);

  Tensor params() const { return params_; }  // (P,)
  Tensor grads() const { return grads_; }    // (P,)
  const std::vector<std::pair<std::string, Tensor>>& named_parameters() const { return named_parameters_; }
  // Where each parameter starts in the buffers (same order as named_parameters()).
  const std::vector<int64_t>& offsets() const { return offsets_; }

  void zero_grad();

 private:
  Tensor params_, grads_;
  std::vector<std::pair<std::string, Tensor>> named_parameters_;
  std::vector<int64_t> offsets_;
};

}  // namespace tg::nn
