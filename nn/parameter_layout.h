// ParameterLayout: where each parameter of a model sits in a flat (P,) buffer.
//
// Every buffer that holds one number per parameter element uses this one
// layout: a ParameterArena's parameters and gradients, AdamW's two moments,
// SGD's momentum, and the checkpoint that saves them. Parameters lie back to
// back in named_parameters() order, without padding, so P = parameter_count():
//
//   (P,) = [ wte.weight (V*C) | wpe.weight (block_size*C) | blocks.0.ln_1.weight (C) | ... ]
//            offset 0           offset V*C                  offset V*C + block_size*C
//
// This class is the only place that computes those offsets. Whatever works on
// every parameter alike (zeroing, the gradient norm, AdamW, an all-reduce) is
// one loop over a (P,) buffer; what needs a parameter's own shape or name (a
// checkpoint's tensors, AdamW's decay groups) takes view(buffer, i).
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg::nn {

class ParameterLayout {
 public:
  struct Slot {
    std::string name;  // as named_parameters() gives it: "blocks.0.attn.qkv.weight"
    Shape shape;
    int64_t offset;    // of the parameter's first element in a (P,) buffer
    int64_t count;     // its number of elements
  };

  // The layout of these parameters, in this order (all of one dtype).
  explicit ParameterLayout(const std::vector<std::pair<std::string, Tensor>>& named_parameters);

  const std::vector<Slot>& slots() const { return slots_; }
  int64_t total() const { return total_; }  // P
  DType dtype() const { return dtype_; }

  // A new zero-filled (P,) buffer of the layout's dtype.
  Tensor zeros() const;
  // Slot i's part of a (P,) buffer, viewed in the parameter's shape (no copy).
  Tensor view(const Tensor& buffer, size_t slot) const;

 private:
  std::vector<Slot> slots_;
  int64_t total_ = 0;
  DType dtype_ = DType::Float32;
};

}  // namespace tg::nn
