#include "nn/optim/sgd.h"

#include "tensor/factory.h"
#include "tensor/threads.h"

namespace tg::nn {

SGD::SGD(std::vector<Tensor> parameters, SGDOptions options)
    : parameters_(std::move(parameters)), options_(options) {
  check(options.lr >= 0 && options.momentum >= 0 && options.weight_decay >= 0,
        "SGD: lr, momentum and weight_decay must be non-negative, got ", options.lr, ", ", options.momentum, ", ",
        options.weight_decay);
  check(!parameters_.empty(), "SGD: no parameters");
  int64_t total = 0;
  for (const Tensor& parameter : parameters_) {
    check(parameter.is_contiguous() && parameter.dtype() == parameters_.front().dtype(),
          "SGD: parameters must be contiguous and share one dtype, got one of shape ", parameter.shape(), " and dtype ",
          dtype_name(parameter.dtype()));
    offsets_.push_back(total);
    total += parameter.numel();
  }
  if (options.momentum > 0) momentum_buffer_ = zeros({total}, parameters_.front().dtype());
}

namespace {

std::vector<Tensor> tensors_of(const ParameterArena& arena) {
  std::vector<Tensor> tensors;
  for (const auto& [name, parameter] : arena.named_parameters()) tensors.push_back(parameter);
  return tensors;
}

}  // namespace

SGD::SGD(const ParameterArena& arena, SGDOptions options) : SGD(tensors_of(arena), options) {}

void SGD::step() {
  for (size_t index = 0; index < parameters_.size(); ++index) {
    const Tensor& parameter = parameters_[index];
    const Tensor grad = parameter.grad();
    if (!grad.defined()) continue;
    check(grad.is_contiguous(), "SGD: the gradient of a parameter of shape ", parameter.shape(), " is not contiguous");
    visit_floating(parameter.dtype(), "SGD", [&]<class T>() {
      T* p = parameter.data<T>();
      const T* g = grad.data<T>();
      T* buf = momentum_buffer_.defined() ? momentum_buffer_.data<T>() + offsets_[index] : nullptr;
      const T lr = static_cast<T>(options_.lr), momentum = static_cast<T>(options_.momentum),
              decay = static_cast<T>(options_.weight_decay);
      const int64_t count = parameter.numel();
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
}

}  // namespace tg::nn
