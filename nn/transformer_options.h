// The sizes and switches shared by the layers of a transformer block
// (attention, MLP, block); models/ fills them from a GPTConfig.
#pragma once
#include <cstdint>

#include "tinygpt/tensor/cpu/gelu_approximation.h"
#include "tinygpt/tensor/dtype.h"

namespace tg::nn {

struct TransformerOptions {
  int64_t n_embd = 128;          // C
  int64_t n_head = 4;            // NH; C must divide by it (HS = C / NH)
  bool bias = true;              // biases in the Linears and LayerNorms (GPT-2: yes)
  double dropout = 0.0;          // on each residual branch's output (training mode only)
  GeluApproximation gelu = GeluApproximation::Tanh;
  double layer_norm_eps = 1e-5;
  bool rope = false;             // rotate q and k by position (RoPE) inside attention
  double rope_base = 10000.0;
  DType dtype = DType::Float32;  // float64 for gradient checks

  void validate() const;         // positive sizes, C % NH == 0, even HS with RoPE, 0 <= dropout < 1
  int64_t head_size() const { return n_embd / n_head; }  // HS
};

}  // namespace tg::nn
