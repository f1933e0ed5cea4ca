#include "tinygpt/nn/optim/clip.h"

#include <cmath>

#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg::nn {

namespace {

constexpr double kClipEpsilon = 1e-6;  // torch's: keeps the scale finite for a zero norm
constexpr int64_t kChunk = 1 << 16;    // elements per partial sum

constexpr int64_t kLanes = 8;        // independent sums within a chunk

// sum of x^2 over up to kChunk values, in kLanes interleaved double sums (one
// sum alone waits on each add's latency, a visible share of a small model's
// step: docs/performance.md), added pairwise at the end.
template <class T>
double chunk_sum_of_squares(const T* values, int64_t count) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= count; i += kLanes)
    for (int64_t lane = 0; lane < kLanes; ++lane)
      lanes[lane] += static_cast<double>(values[i + lane]) * static_cast<double>(values[i + lane]);
  for (int64_t lane = 0; i < count; ++i, ++lane) lanes[lane] += static_cast<double>(values[i]) * static_cast<double>(values[i]);
  for (int64_t width = kLanes / 2; width > 0; width /= 2)
    for (int64_t lane = 0; lane < width; ++lane) lanes[lane] += lanes[lane + width];
  return lanes[0];
}

// sum of x^2 over a contiguous buffer: per-chunk double sums, added in chunk
// order (the same for any number of threads).
template <class T>
double sum_of_squares(const T* values, int64_t count) {
  const int64_t chunks = (count + kChunk - 1) / kChunk;
  std::vector<double> partial(chunks, 0.0);
#pragma omp parallel for schedule(static) if (chunks > 1)
  for (int64_t chunk = 0; chunk < chunks; ++chunk) {
    const int64_t begin = chunk * kChunk;
    partial[chunk] = chunk_sum_of_squares(values + begin, std::min(count, begin + kChunk) - begin);
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
