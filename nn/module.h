// Module: the base of every layer. It keeps a registry of named parameters and
// child modules, so a model can list its parameters by dotted path
// ("blocks.0.attn.qkv.weight"), count them, switch train/eval mode and zero the
// gradients, all recursively and in a stable order.
//
// Dimension letters used across nn/ and models/:
//   B batch, T time (sequence), C channels (n_embd), NH heads, HS head size = C / NH,
//   V vocabulary, L layers.
//
// Order: a module's own parameters first (in registration order), then each
// child's, recursively, in registration order (as torch.nn.Module does). A tensor
// registered twice (e.g. a tied weight) is listed once, under its first name.
#pragma once
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/tensor/quantized_values.h"
#include "tinygpt/tensor/tensor.h"

namespace tg {
// Only the layers that can be quantized (Linear, Embedding, the learned positions) see its
// definition, through their own headers.
struct QuantizedMatrix;
}  // namespace tg

namespace tg::nn {

class Module {
 public:
  Module() = default;
  virtual ~Module() = default;
  // Layers hold their parameters by handle; a copy would silently share them.
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  std::vector<std::pair<std::string, Tensor>> named_parameters() const;
  std::vector<Tensor> parameters() const;
  int64_t parameter_count() const;  // elements

  void train(bool on = true);  // recursive
  void eval() { train(false); }
  bool is_training() const { return training_; }

  // Zero-fills every gradient that exists, in place: gradients that are views
  // into a ParameterArena stay views (tg::zero_grad would drop them instead).
  void zero_grad();

  // This module's own parameters and children (not recursive), in registration order.
  const std::vector<std::pair<std::string, Tensor>>& own_parameters() const { return parameters_; }
  const std::vector<std::pair<std::string, std::shared_ptr<Module>>>& children() const { return children_; }
  // One line describing this module alone, e.g. "Linear(in=128, out=384, bias)".
  virtual std::string describe() const = 0;

 protected:
  // Registers `value` under `name` (no dots) and marks it as requiring grad.
  Tensor register_parameter(const std::string& name, Tensor value);
  // Replaces the float32 matrix registered as `name` by its reduced-precision
  // form (tensor/quantized_matrix.h; nn/quantize.h): the values under `name`
  // and, for int8, the scales under name + "_scale" right after it. Neither
  // requires grad: a quantized module runs inference only. QuantizedValues::Zeros
  // leaves zeros for a loader to fill instead of reading the float32 values.
  QuantizedMatrix quantize_parameter(const std::string& name, DType format,
                                     QuantizedValues values = QuantizedValues::FromWeights);
  // Drops the child registered as `name` (a LoRA adapter once merged into its Linear).
  void remove_module(const std::string& name);
  template <class M>
  std::shared_ptr<M> register_module(const std::string& name, std::shared_ptr<M> module) {
    check_new_name(name);
    children_.emplace_back(name, module);
    return module;
  }

 private:
  void check_new_name(const std::string& name) const;
  void collect_parameters(const std::string& prefix, std::vector<std::pair<std::string, Tensor>>& out) const;

  std::vector<std::pair<std::string, Tensor>> parameters_;
  std::vector<std::pair<std::string, std::shared_ptr<Module>>> children_;
  bool training_ = true;
};

// The module tree, one line per module with its own parameters' shapes:
//   blocks.0.attn.qkv: Linear(in=128, out=384, bias)  weight (384, 128), bias (384)
void print_tree(std::ostream& out, const Module& module);

// Puts a module in eval mode for the guard's lifetime, then restores its mode
// (generation, evaluation and the walk-through run this way inside training).
class EvalModeGuard {
 public:
  explicit EvalModeGuard(Module& module) : module_(module), was_training_(module.is_training()) { module_.eval(); }
  ~EvalModeGuard() { module_.train(was_training_); }
  EvalModeGuard(const EvalModeGuard&) = delete;
  EvalModeGuard& operator=(const EvalModeGuard&) = delete;

 private:
  Module& module_;
  bool was_training_;
};

}  // namespace tg::nn
