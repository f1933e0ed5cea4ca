// Stochastic gradient descent with momentum, torch.optim.SGD's formula
// (dampening 0, not Nesterov), over the parameters of a ParameterArena:
//
//   g   = grad + weight_decay * p        (L2, coupled; weight_decay 0 by default)
//   buf = momentum * buf + g             (buf starts at 0, so the first buf is g)
//   p  -= lr * buf                       (with momentum 0: p -= lr * g)
//
// Every parameter is treated alike, so a step is one loop over the arena's (P,)
// params and grads; the momentum buffer is a (P,) buffer in the arena's layout.
#pragma once
#include "tinygpt/nn/parameter_arena.h"

namespace tg::nn {

struct SGDOptions {
  double lr = 1e-2;
  double momentum = 0.0;
  double weight_decay = 0.0;
};

class SGD {
 public:
  // The optimiser keeps a reference to the arena, which must outlive it.
  SGD(const ParameterArena& arena, SGDOptions options);

  void step();
  void set_lr(double lr) { options_.lr = lr; }
  const SGDOptions& options() const { return options_; }
  const Tensor& momentum_buffer() const { return momentum_buffer_; }  // (P,); undefined without momentum

 private:
  const ParameterArena& arena_;
  SGDOptions options_;
  Tensor momentum_buffer_;
};

}  // namespace tg::nn
