// Gradients of the reductions and softmax: hand-checkable cases, then
// gradcheck on contiguous, transposed, sliced and broadcast inputs with
// keepdim true and false.
#include <doctest/doctest.h>

#include <functional>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/elementwise_ops.h"
#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/reduce_ops.h"
#include "tinygpt/autograd/view_ops.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

using Fn = std::function<Tensor(const Tensor&)>;

Tensor leaf(Tensor x) {
  x.set_requires_grad();
  return x;
}

// The float64 leaves every differentiable op is checked on: contiguous,
// transposed and sliced (strided) views, all of shape (3, 4, 5).
std::vector<Tensor> layouts(uint64_t seed) {
  Generator generator(seed);
  return {
      leaf(randn({3, 4, 5}, generator, DType::Float64)),
      leaf(raw::transpose(randn({5, 4, 3}, generator, DType::Float64), 0, 2)),
      leaf(raw::slice(randn({3, 4, 10}, generator, DType::Float64), 2, 1, 10, 2)),
  };
}

void check_gradients(const char* what, const Fn& f, uint64_t seed = 1) {
  for (const Tensor& x : layouts(seed)) {
    CAPTURE(what);
    CAPTURE(shape_str(x.strides()));
    const GradcheckResult result = gradcheck([&](const std::vector<Tensor>& inputs) { return f(inputs[0]); }, {x});
    CHECK_MESSAGE(result.ok, result.report);
  }
}

const std::vector<std::vector<int64_t>> kDimSets = {{}, {0}, {1}, {-1}, {0, 2}, {2, 0, 1}};

}  // namespace

TEST_CASE("sum backward broadcasts the gradient over the reduced dims") {
  const Tensor x = leaf(ones({2, 2}, DType::Float64));
  backward(sum(x, {0}), from_vector<double>({1, 2}));
  CHECK(x.grad().to_vector<double>() == std::vector<double>{1, 2, 1, 2});
  CHECK(x.grad().shape() == Shape{2, 2});
  CHECK(x.grad().dtype() == DType::Float64);
}

TEST_CASE("mean backward spreads 1/N") {
  const Tensor x = leaf(ones({2, 2}));
  backward(mean(x));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0.25f, 0.25f, 0.25f, 0.25f});
  CHECK(x.grad().dtype() == DType::Float32);
}

TEST_CASE("var backward: 2 (x - mean) / (N - 1)") {
  const Tensor x = leaf(from_vector<double>({1, 2, 3, 4}));
  backward(var(x));
  // mean 2.5, N - 1 = 3
  const std::vector<double> grad = x.grad().to_vector<double>();
  const std::vector<double> expected = {-1.0, -1.0 / 3, 1.0 / 3, 1.0};
  for (size_t i = 0; i < 4; ++i) CHECK(grad[i] == doctest::Approx(expected[i]).epsilon(1e-15));
}

TEST_CASE("max backward sends the gradient to the first maximum only") {
  const Tensor x = leaf(from_vector<float>({1, 5, 5, 7, 2, 7}, {2, 3}));
  const raw::MaxResult result = max(x, 1);
  CHECK(result.values.requires_grad());
  CHECK(!result.indices.requires_grad());
  backward(result.values, from_vector<float>({10, 20}));
  CHECK(x.grad().to_vector<float>() == std::vector<float>{0, 10, 0, 20, 0, 0});
}

TEST_CASE("argmax is not differentiable; nothing is recorded without requires_grad") {
  const Tensor x = leaf(from_vector<float>({1, 3, 2}));
  CHECK(!argmax(x, 0).requires_grad());
  CHECK(argmax(x, 0).item<int64_t>() == 1);
  const Tensor plain = from_vector<float>({1, 3, 2});
  CHECK(!sum(plain).requires_grad());
  CHECK(!softmax(plain, 0).requires_grad());
  CHECK(!max(plain, 0).values.requires_grad());
}

TEST_CASE("softmax backward by hand") {
  const Tensor x = leaf(from_vector<double>({0, 0}));
  backward(softmax(x, 0), from_vector<double>({1, 0}));
  CHECK(x.grad().to_vector<double>() == std::vector<double>{0.25, -0.25});
}

TEST_CASE("gradcheck: sum and mean over every dim set, keepdim true and false") {
  for (const std::vector<int64_t>& dims : kDimSets) {
    for (bool keepdim : {false, true}) {
      CAPTURE(shape_str(Shape(dims)));
      CAPTURE(keepdim);
      check_gradients("sum", [&](const Tensor& x) { return sum(x, dims, keepdim); });
      check_gradients("mean", [&](const Tensor& x) { return mean(x, dims, keepdim); });
    }
  }
}

TEST_CASE("gradcheck: var, unbiased and biased") {
  for (const std::vector<int64_t>& dims : kDimSets) {
    for (bool keepdim : {false, true}) {
      for (bool unbiased : {true, false}) {
        CAPTURE(shape_str(Shape(dims)));
        CAPTURE(keepdim);
        CAPTURE(unbiased);
        check_gradients("var", [&](const Tensor& x) { return var(x, dims, unbiased, keepdim); });
      }
    }
  }
}

TEST_CASE("gradcheck: max values along each dim") {
  for (int64_t dim : {0, 1, 2, -1}) {
    for (bool keepdim : {false, true}) {
      CAPTURE(dim);
      CAPTURE(keepdim);
      check_gradients("max", [&](const Tensor& x) { return max(x, dim, keepdim).values; });
    }
  }
}

TEST_CASE("gradcheck: softmax and log_softmax along each dim") {
  for (int64_t dim : {0, 1, 2, -1}) {
    CAPTURE(dim);
    check_gradients("softmax", [&](const Tensor& x) { return softmax(x, dim); });
    check_gradients("log_softmax", [&](const Tensor& x) { return log_softmax(x, dim); });
  }
}

TEST_CASE("gradcheck: reductions of broadcast inputs") {
  Generator generator(4);
  const Tensor column = leaf(randn({3, 1}, generator, DType::Float64));
  const Tensor bias = leaf(randn({5}, generator, DType::Float64));
  const Tensor x = leaf(randn({2, 3, 5}, generator, DType::Float64));
  const auto check_fn = [&](const char* what, const std::function<Tensor(const std::vector<Tensor>&)>& f) {
    CAPTURE(what);
    const GradcheckResult result = gradcheck(f, {column, bias, x});
    CHECK_MESSAGE(result.ok, result.report);
  };
  // The expanded view has stride 0: sum, mean, var, max and softmax read it as is.
  check_fn("sum of expand", [](const std::vector<Tensor>& in) { return sum(expand(in[0], {3, 4}), {0}); });
  check_fn("mean of expand", [](const std::vector<Tensor>& in) { return mean(expand(in[0], {2, 3, 4}), {0, 2}, true); });
  check_fn("var of broadcast add", [](const std::vector<Tensor>& in) { return var(in[2] + in[1], {1}); });
  check_fn("softmax of broadcast add", [](const std::vector<Tensor>& in) { return softmax(in[2] + in[1] * in[0], 1); });
  check_fn("log_softmax of broadcast add",
           [](const std::vector<Tensor>& in) { return log_softmax(in[2] * in[0] + in[1], -1); });
  check_fn("max of broadcast add", [](const std::vector<Tensor>& in) { return max(in[2] + in[0], 2).values; });
  check_fn("softmax of expand", [](const std::vector<Tensor>& in) { return softmax(expand(in[1], {3, 5}), 0); });
}

TEST_CASE("reduction gradients keep the input's shape and dtype") {
  const Tensor x = leaf(ones({2, 3, 4}));
  backward(sum(mean(softmax(x, 1), {0, 2}, true) * var(x, {-1}, true, true)));
  CHECK(x.grad().shape() == Shape{2, 3, 4});
  CHECK(x.grad().dtype() == DType::Float32);
}

TEST_CASE("mean and var backward with a size-0 dim that is kept: an empty gradient, as torch") {
  // mean over dim 1 of a (0, 3) tensor: y is (0,); dx must be (0, 3). The count
  // reduced over is 3; numel(x) / numel(y) would be 0 / 0.
  for (const Shape& shape : {Shape{0, 3}, Shape{2, 0, 3}}) {
    CAPTURE(shape);
    const Tensor x = leaf(zeros(shape));
    backward(sum(mean(x, {-1})));
    CHECK(x.grad().shape() == shape);
    const Tensor z = leaf(zeros(shape));
    backward(sum(var(z, {-1}, /*unbiased=*/true)));
    CHECK(z.grad().shape() == shape);
  }
  // Reducing the empty dim itself: the gradient is empty too.
  const Tensor x = leaf(zeros({0, 3}));
  backward(sum(mean(x, {0})));
  CHECK(x.grad().shape() == Shape{0, 3});
}
