// Stochastic gradient descent with momentum, torch.optim.SGD's formula
// (dampening 0, not Nesterov):
//
//   g   = grad + weight_decay * p        (L2, coupled; weight_decay 0 by default)
//   buf = momentum * buf + g             (buf starts at 0, so the first buf is g)
//   p  -= lr * buf                       (with momentum 0: p -= lr * g)
//
// Parameters without a gradient are skipped. The momentum buffer is one flat
// (P,) tensor laid out like a ParameterArena (parameters back to back in order).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "nn/parameter_arena.h"

namespace tg::nn {

struct SGDOptions {
  double lr = 1e-2;
  double momentum = 0.0;
  double weight_decay = 0.0;
};

class SGD {
 public:
  SGD(std::vector<Tensor> parameters, SGDOptions options);
  SGD(const ParameterArena& arena, SGDOptions options);

  void step();
  void set_lr(double lr) { options_.lr = lr; }
  const SGDOptions& options() const { return options_; }
  const Tensor& momentum_buffer() const { return momentum_buffer_; }  // (P,); undefined without momentum

 private:
  std::vector<Tensor> parameters_;
  std::vector<int64_t> offsets_;  // of each parameter in momentum_buffer_
  SGDOptions options_;
  Tensor momentum_buffer_;
};

}  // namespace tg::nn
