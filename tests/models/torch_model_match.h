// How a whole model's result is held against a PyTorch fixture
// (test_torch_gpt_parity.cpp, test_torch_modern_parity.cpp).
#pragma once
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg::testing {

// |actual - expected| <= 1e-5 (|expected| + max |expected|) elementwise: 1e-5
// relative to each value, with the tensor's own scale as the floor, so values near
// zero (a gradient that nearly cancels) are held to the tensor's precision, not to
// an impossible relative one.
inline void check_matches(const Tensor& actual, const Tensor& expected, const std::string& what) {
  CAPTURE(what);
  REQUIRE(actual.shape() == expected.shape());
  const std::vector<double> a = actual.to_vector<double>(), e = expected.to_vector<double>();
  double scale = 0;
  for (double value : e) scale = std::max(scale, std::abs(value));
  double worst = 0;  // the largest error in units of the allowed error
  for (size_t i = 0; i < a.size(); ++i) worst = std::max(worst, std::abs(a[i] - e[i]) / (1e-5 * (std::abs(e[i]) + scale)));
  CAPTURE(worst);
  CHECK(worst <= 1.0);
}

}  // namespace tg::testing
