#include "nn/optim/clip.h"

#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/profile.h"
#include "tensor/view.h"

namespace tg::nn {

namespace {

constexpr double kClipEpsilon = 1e-6;  // torch's: keeps the scale finite for a zero norm
constexpr int64_t kChunk = 1 << 16;    // elements per partial sum

// sum of x^2 over a contiguous buffer: per-chunk double sums, added in chunk order.
template <class T>
double sum_of_squares(const T* values, int64_t count) {
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<double> partial(chunks, 0.0);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t begin = chunk * kChunk, end = std::min(count, begin + kChunk);
    double sum = 0;
    for (int64_t i = begin; i < end; ++i) sum += static_cast<double>(values[i]) * static_cast<double>(values[i]);
    partial[chunk] = sum;
  }
  double total = 0;
  for (double sum : partial) total += sum;
  return total;
}

double sum_of_squares(const Tensor& x) {
  ProfileScope scope(ProfileFamily::reduce);
  scope.add_bytes_of(x);
  const Tensor contiguous = raw::contiguous(x);
  return visit_floating(x.dtype(), "clip_grad_norm", [&]<class T>() { return sum_of_squares(contiguous.data<T>(), x.numel()); });
}

std::vector<Tensor> gradients_of(const std::vector<Tensor>& parameters) {
  std::vector<Tensor> grads;
  for (const Tensor& parameter : parameters)
    if (parameter.grad().defined()) grads.push_back(parameter.grad());
  return grads;
}

double norm_of(const std::vector<Tensor>& grads) {
  ProfilePassScope pass(ProfilePass::update);
  double total = 0;
  for (const Tensor& grad : grads) total += sum_of_squares(grad);
  return std::sqrt(total);
}

double clip(const std::vector<Tensor>& grads, double max_norm) {
  check(max_norm > 0, "clip_grad_norm: max_norm must be positive, got ", max_norm);
  ProfilePassScope pass(ProfilePass::update);
  const double norm = norm_of(grads);
  const double scale = max_norm / (norm + kClipEpsilon);
  if (scale < 1)
    for (const Tensor& grad : grads) raw::mul_(grad, scale);
  return norm;
}

}  // namespace

double clip_grad_norm(const std::vector<Tensor>& parameters, double max_norm) {
  return clip(gradients_of(parameters), max_norm);
}

double clip_grad_norm(const ParameterArena& arena, double max_norm) { return clip({arena.grads()}, max_norm); }

double grad_norm(const std::vector<Tensor>& parameters) { return norm_of(gradients_of(parameters)); }

double grad_norm(const ParameterArena& arena) { return norm_of({arena.grads()}); }

}  // namespace tg::nn
