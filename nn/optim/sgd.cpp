#include "tinygpt/nn/optim/sgd.h"

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

SGD::SGD(const ParameterArena& arena, SGDOptions options) : arena_(arena), options_(options) {
  check(options.lr >= 0 && options.momentum >= 0 && options.weight_decay >= 0,
        "SGD: lr, momentum and weight_decay must be non-negative, got ", options.lr, ", ", options.momentum, ", ",
        options.weight_decay);
  if (options.momentum > 0) momentum_buffer_ = arena.layout().zeros();
}

void SGD::step() {
  const Tensor params = arena_.params(), grads = arena_.grads();
  raw::begin_in_place_write(params, "SGD");
  visit_floating(params.dtype(), "SGD", [&]<class T>() {
    T* p = params.data<T>();
    const T* g = grads.data<T>();
    T* buf = momentum_buffer_.defined() ? momentum_buffer_.data<T>() : nullptr;
    const T lr = static_cast<T>(options_.lr), momentum = static_cast<T>(options_.momentum),
            decay = static_cast<T>(options_.weight_decay);
    const int64_t count = params.numel();
#pragma omp parallel for simd schedule(static) if (count >= kParallelThreshold)
    for (int64_t i = 0; i < count; ++i) {
      const T step_direction = g[i] + decay * p[i];
      if (buf) {
        buf[i] = momentum * buf[i] + step_direction;
        p[i] -= lr * buf[i];
      } else {
        p[i] -= lr * step_direction;
      }
    }
  });
}

}  // namespace tg::nn
