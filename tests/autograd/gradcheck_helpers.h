// Helpers shared by the gradient-check suites: float64 leaves and a doctest
// wrapper around tg::gradcheck that prints its report on failure.
#pragma once
#include <doctest/doctest.h>

#include <functional>
#include <vector>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

namespace tg::testing {

inline Tensor leaf(Tensor x) {
  x.set_requires_grad();
  return x;
}

// Uniform float64 values in [low, high), not requiring grad.
inline Tensor values(const Shape& shape, uint64_t seed, double low = -2, double high = 2) {
  Generator generator(seed);
  return uniform(shape, low, high, generator, DType::Float64);
}

// A float64 leaf of `shape` that requires grad.
inline Tensor input(const Shape& shape, uint64_t seed, double low = -2, double high = 2) {
  return leaf(values(shape, seed, low, high));
}

// A leaf that is the transpose of a stored (.., cols, rows) tensor: strides swapped, no copy.
inline Tensor transposed_input(const Shape& stored_shape, uint64_t seed) {
  return leaf(raw::transpose(values(stored_shape, seed), -2, -1));
}

inline void check_gradients(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs) {
  const GradcheckResult result = gradcheck(f, inputs);
  INFO(result.report);
  CHECK(result.ok);
}

}  // namespace tg::testing
