// Numeric gradient checking: compares the gradients backward() computes with
// central differences, (f(x + eps) - f(x - eps)) / 2 eps, in float64.
//
// The function's output y may have any shape: the check differentiates the
// scalar sum(y * w) for a fixed random w, which exercises every output element.
#pragma once
#include <functional>
#include <string>
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg {

struct GradcheckOptions {
  double eps = 1e-6;
  double atol = 1e-6;
  double rtol = 1e-4;
  uint64_t seed = 0;  // for the projection w
};

struct GradcheckResult {
  bool ok = true;
  double max_abs_error = 0;
  std::string report;  // which input, which element, analytic vs numeric, on failure
};

// `inputs` are float64 leaves (any strides, e.g. a transposed or sliced view,
// but not expanded); those that require grad are checked. f must be
// deterministic.
GradcheckResult gradcheck(const std::function<Tensor(const std::vector<Tensor>&)>& f, const std::vector<Tensor>& inputs,
                          const GradcheckOptions& options = {});

}  // namespace tg
