// Helpers shared by the tests of the fused kernels (nn/functional/).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/tensor/view.h"

namespace tg::test {

using TensorFunction = std::function<Tensor(const std::vector<Tensor>&)>;

// A leaf of random normal values that requires grad.
inline Tensor random_leaf(const Shape& shape, Generator& generator, DType dtype = DType::Float32) {
  Tensor x = randn(shape, generator, dtype);
  x.set_requires_grad();
  return x;
}

// max |actual - expected| / max |expected|: the error relative to the tensor's scale,
// so that tiny elements (near-cancelled gradients) do not dominate.
inline double relative_error(const Tensor& actual, const Tensor& expected) {
  REQUIRE(actual.shape() == expected.shape());
  const std::vector<double> a = actual.to_vector<double>(), b = expected.to_vector<double>();
  double max_difference = 0, max_expected = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    max_difference = std::max(max_difference, std::abs(a[i] - b[i]));
    max_expected = std::max(max_expected, std::abs(b[i]));
  }
  if (std::isnan(max_difference)) return INFINITY;
  return max_difference / std::max(max_expected, 1e-30);
}

// Runs f on `inputs` (leaves that require grad), backpropagates `grad_output`,
// and returns the output followed by each input's gradient.
inline std::vector<Tensor> output_and_grads(const TensorFunction& f, const std::vector<Tensor>& inputs,
                                            const Tensor& grad_output) {
  zero_grad(inputs);
  const Tensor output = f(inputs);
  backward(output, grad_output);
  std::vector<Tensor> results{output.detach()};
  for (const Tensor& input : inputs) results.push_back(input.grad());
  zero_grad(inputs);
  return results;
}

// The fused op and its reference composition agree, forward and backward, to
// `tolerance` relative to each tensor's scale.
inline void check_matches_reference(const TensorFunction& fused, const TensorFunction& reference,
                                    const std::vector<Tensor>& inputs, double tolerance = 1e-5) {
  Tensor probe;
  {
    NoGradGuard no_grad;
    probe = fused(inputs);
  }
  Generator generator(123);
  const Tensor grad_output = randn(probe.shape(), generator, probe.dtype());
  const std::vector<Tensor> fused_results = output_and_grads(fused, inputs, grad_output);
  const std::vector<Tensor> reference_results = output_and_grads(reference, inputs, grad_output);
  for (size_t i = 0; i < fused_results.size(); ++i) {
    const std::string what = i == 0 ? std::string("output") : "gradient of input " + std::to_string(i - 1);
    INFO(what);
    REQUIRE(fused_results[i].defined() == reference_results[i].defined());
    if (fused_results[i].defined()) CHECK(relative_error(fused_results[i], reference_results[i]) <= tolerance);
  }
}

inline void check_gradients(const TensorFunction& f, const std::vector<Tensor>& inputs,
                            const GradcheckOptions& options = {}) {
  const GradcheckResult result = gradcheck(f, inputs, options);
  CHECK_MESSAGE(result.ok, result.report);
}

}  // namespace tg::test
