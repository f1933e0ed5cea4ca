// Numeric gradient checks of the differentiable views.
#include <doctest/doctest.h>

#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"

using namespace tg;

namespace {

Tensor input(const Shape& shape, uint64_t seed) {
  Generator generator(seed);
  Tensor x = uniform(shape, -2, 2, generator, DType::Float64);
  x.set_requires_grad();
  return x;
}

// Views alone are linear maps; multiply by a fixed tensor so each output element matters differently.
void check_view(const std::function<Tensor(const Tensor&)>& view_fn, const Shape& shape) {
  const GradcheckResult result = gradcheck([&](auto& x) { return exp(view_fn(x[0])); }, {input(shape, 1)});
  INFO(result.report);
  CHECK(result.ok);
}

}  // namespace

TEST_CASE("views") {
  check_view([](const Tensor& x) { return reshape(x, {3, 4}); }, {2, 6});
  check_view([](const Tensor& x) { return view(x, {-1}); }, {2, 3});
  check_view([](const Tensor& x) { return transpose(x, 0, 2); }, {2, 3, 4});
  check_view([](const Tensor& x) { return permute(x, {1, 2, 0}); }, {2, 3, 4});
  check_view([](const Tensor& x) { return slice(x, 1, 1, 5, 2); }, {2, 6});
  check_view([](const Tensor& x) { return narrow(x, 0, 1, 2); }, {4, 3});
  check_view([](const Tensor& x) { return select(x, 1, -1); }, {2, 3});
  check_view([](const Tensor& x) { return squeeze(x, 1); }, {3, 1, 2});
  check_view([](const Tensor& x) { return unsqueeze(x, 0); }, {3, 2});
  check_view([](const Tensor& x) { return expand(x, {4, 3, 2}); }, {3, 1});
  check_view([](const Tensor& x) { return contiguous(transpose(x, 0, 1)); }, {3, 2});
  check_view([](const Tensor& x) { return reshape(transpose(x, 0, 1), {-1}); }, {3, 2});  // reshape that copies
  check_view([](const Tensor& x) { return clone(x); }, {2, 2});
}

TEST_CASE("to_dtype passes gradients back in the input's dtype") {
  Tensor x = input({3}, 2);
  Tensor y = to_dtype(x, DType::Float32);
  backward(sum(y * 2.0));
  CHECK(x.grad().dtype() == DType::Float64);
  CHECK(x.grad().to_vector<double>() == std::vector<double>{2, 2, 2});
}
