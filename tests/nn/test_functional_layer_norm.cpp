#include <doctest/doctest.h>

#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "test_functional_helpers.h"

using namespace tg;

TEST_CASE("layer_norm normalises a row by hand") {
  // x = (1, 2, 3): mean 2, biased variance 2/3, so xhat = (-1, 0, 1) * sqrt(3/2).
  const Tensor x = from_vector<double>({1, 2, 3}, {1, 3});
  const Tensor y = nn::layer_norm(x, from_vector<double>({1, 1, 2}), from_vector<double>({0, 5, 0}), 0.0);
  const std::vector<double> values = y.to_vector<double>();
  CHECK(values[0] == doctest::Approx(-std::sqrt(1.5)));
  CHECK(values[1] == doctest::Approx(5.0));
  CHECK(values[2] == doctest::Approx(2 * std::sqrt(1.5)));
}

TEST_CASE("layer_norm gradients match central differences (float64)") {
  Generator generator(1);
  const Tensor x = test::random_leaf({2, 3, 5}, generator, DType::Float64);
  const Tensor weight = test::random_leaf({5}, generator, DType::Float64);
  const Tensor bias = test::random_leaf({5}, generator, DType::Float64);
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::layer_norm(in[0], in[1], in[2]); },
                        {x, weight, bias});
}

TEST_CASE("layer_norm gradients on a transposed input") {
  Generator generator(2);
  const Tensor base = randn({5, 4}, generator, DType::Float64);
  Tensor x = raw::transpose(base, 0, 1);  // (4, 5), not contiguous
  x.set_requires_grad();
  const Tensor weight = test::random_leaf({5}, generator, DType::Float64);
  const Tensor bias = test::random_leaf({5}, generator, DType::Float64);
  test::check_gradients([](const std::vector<Tensor>& in) { return nn::layer_norm(in[0], in[1], in[2]); },
                        {x, weight, bias});
}

TEST_CASE("layer_norm matches its reference composition (float32)") {
  Generator generator(3);
  // Rows with a large mean relative to their spread test the two-pass variance.
  const Tensor x = test::random_leaf({4, 33, 48}, generator);
  const Tensor weight = test::random_leaf({48}, generator);
  const Tensor bias = test::random_leaf({48}, generator);
  test::check_matches_reference([](const std::vector<Tensor>& in) { return nn::layer_norm(in[0], in[1], in[2]); },
                                [](const std::vector<Tensor>& in) { return nn::layer_norm_reference(in[0], in[1], in[2]); },
                                {x, weight, bias});
}

TEST_CASE("layer_norm backward computes only the gradients asked for") {
  Generator generator(4);
  const Tensor x = randn({3, 4}, generator);  // no grad wanted
  const Tensor weight = test::random_leaf({4}, generator);
  const Tensor bias = randn({4}, generator);
  backward(sum(nn::layer_norm(x, weight, bias)));
  CHECK(weight.grad().defined());
  CHECK_FALSE(x.grad().defined());
}

TEST_CASE("layer_norm names both shapes when they do not fit") {
  const Tensor x = zeros({2, 3});
  CHECK_THROWS_WITH_AS(nn::layer_norm(x, zeros({4}), zeros({4})),
                       doctest::Contains("layer_norm: x of shape (2, 3) needs weight and bias of shape (3,), got (4,) and (4,)"),
                       Error);
  CHECK_THROWS_WITH_AS(nn::layer_norm(x, zeros({3}, DType::Float64), zeros({3})), doctest::Contains("dtype"), Error);
}

TEST_CASE("layer_norm of a constant row is exactly 0 (NaN with eps 0), fused and reference, as the exact answer") {
  // The mean of 17 copies of 1000.1f, summed in float, is off by an ulp or so;
  // normalising the deviations that leaves by sqrt(var + eps) ~ 0.003 turned them
  // into -0.06 (torch float32 gives -0.016; the exact answer is 0).
  for (const float value : {1000.1f, -77.7f, 3.3f, 1e6f + 0.5f}) {
    for (const int64_t channels : {int64_t{17}, int64_t{128}, int64_t{3}}) {
      CAPTURE(value);
      CAPTURE(channels);
      const Tensor x = full({2, channels}, value);
      const Tensor weight = ones({channels}), bias = zeros({channels});
      for (const float y : nn::layer_norm(x, weight, bias, 1e-5).to_vector<float>()) CHECK(y == 0.0f);
      for (const float y : nn::layer_norm_reference(x, weight, bias, 1e-5).to_vector<float>()) CHECK(y == 0.0f);
      for (const float y : nn::layer_norm(x, weight, bias, 0.0).to_vector<float>()) CHECK(std::isnan(y));
      for (const float y : nn::layer_norm_reference(x, weight, bias, 0.0).to_vector<float>()) CHECK(std::isnan(y));
    }
  }
}

TEST_CASE("layer_norm backward: the same gradients on 1, 2 and 3 threads") {
  // 301 rows of 128: above the parallel threshold, and not a multiple of the 64 summing runs.
  Generator generator(5);
  const Tensor x = randn({301, 128}, generator), dy = randn({301, 128}, generator);
  const Tensor weight = randn({128}, generator), bias = randn({128}, generator);
  const int threads_before = thread_ceiling();
  std::vector<std::vector<std::vector<float>>> gradients;
  for (int threads : {1, 2, 3}) {
    set_num_threads(threads);
    Tensor x_leaf = x.detach(), weight_leaf = weight.detach(), bias_leaf = bias.detach();
    x_leaf.set_requires_grad();
    weight_leaf.set_requires_grad();
    bias_leaf.set_requires_grad();
    backward(nn::layer_norm(x_leaf, weight_leaf, bias_leaf), dy);
    gradients.push_back({x_leaf.grad().to_vector<float>(), weight_leaf.grad().to_vector<float>(),
                         bias_leaf.grad().to_vector<float>()});
  }
  set_num_threads(threads_before);
  CHECK(gradients[1] == gradients[0]);
  CHECK(gradients[2] == gradients[0]);
}
