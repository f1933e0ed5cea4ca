// The normalisation layers a block can use, behind one interface: LayerNorm
// (GPT-2) or RMSNorm (Llama), as TransformerOptions::norm says.
//
//   x (..., C) -> y (..., C)
#pragma once
#include <memory>

#include "tinygpt/nn/module.h"
#include "tinygpt/nn/transformer_options.h"

namespace tg::nn {

class Normalization : public Module {
 public:
  virtual Tensor forward(const Tensor& x) const = 0;
};

// The norm of options over `channels` (C for ln_1, ln_2, ln_f; HD for QK-norm, always RMSNorm).
std::shared_ptr<Normalization> make_normalization(const TransformerOptions& options, int64_t channels);

}  // namespace tg::nn
