#include <doctest/doctest.h>

#include "tinygpt/nn/functional/dropout.h"
#include "test_functional_helpers.h"

using namespace tg;

namespace {

// Large enough that the kernel runs in parallel.
constexpr int64_t kCount = 40001;

std::vector<float> dropout_with_threads(int threads) {
  const int previous = num_threads();
  set_num_threads(threads);
  Generator generator(42);
  const std::vector<float> result = nn::dropout(ones({kCount}), 0.3, true, generator).to_vector<float>();
  set_num_threads(previous);
  return result;
}

}  // namespace

TEST_CASE("dropout draws the same mask for 1 and 2 threads") {
  CHECK(dropout_with_threads(1) == dropout_with_threads(2));
}

TEST_CASE("dropout keeps about 1 - p of the elements, scaled, so the mean is preserved") {
  Generator generator(1);
  const std::vector<float> y = nn::dropout(ones({kCount}), 0.25, true, generator).to_vector<float>();
  double total = 0;
  int64_t kept = 0;
  for (const float value : y) {
    CHECK((value == 0.0f || value == doctest::Approx(1 / 0.75)));
    total += value;
    kept += value != 0.0f;
  }
  CHECK(static_cast<double>(kept) / kCount == doctest::Approx(0.75).epsilon(0.02));
  CHECK(total / kCount == doctest::Approx(1.0).epsilon(0.02));
}

TEST_CASE("dropout is the identity in evaluation and with p = 0; draws differ between calls") {
  Generator generator(2);
  const Tensor x = randn({5, 7}, generator);
  CHECK(nn::dropout(x, 0.5, false, generator).to_vector<float>() == x.to_vector<float>());
  CHECK(nn::dropout(x, 0.0, true, generator).to_vector<float>() == x.to_vector<float>());
  const Tensor big = ones({1000});
  CHECK(nn::dropout(big, 0.5, true, generator).to_vector<float>() != nn::dropout(big, 0.5, true, generator).to_vector<float>());
}

TEST_CASE("dropout backward uses the forward's mask") {
  Generator generator(3);
  Tensor x = randn({2, 301}, generator);
  x.set_requires_grad();
  const Tensor y = nn::dropout(x, 0.4, true, generator);
  backward(y, ones_like(y));
  // dy = 1, so dx = mask / (1 - p) = y / x where x != 0.
  const std::vector<float> grad = x.grad().to_vector<float>(), out = y.to_vector<float>(), in = x.to_vector<float>();
  for (size_t i = 0; i < grad.size(); ++i) CHECK(grad[i] * in[i] == doctest::Approx(out[i]));
}

TEST_CASE("dropout matches its reference composition for the same generator state (float32)") {
  Generator data(5);
  // An odd count (the last generator value decides one element), a transposed view,
  // and enough elements for the kernel to run in parallel.
  Tensor x = raw::transpose(randn({41, 1001}, data), 0, 1);
  x.set_requires_grad();
  // Each call draws from a generator in the same state: seed 9, counter 3.
  const auto from_state = [](auto op) {
    return [op](const std::vector<Tensor>& in) {
      Generator generator(9);
      generator.advance(3);
      return op(in[0], 0.3, true, generator);
    };
  };
  test::check_matches_reference(from_state(nn::dropout), from_state(nn::dropout_reference), {x}, 0.0);
  Generator fused_generator(9), reference_generator(9);
  nn::dropout(x, 0.3, true, fused_generator);
  nn::dropout_reference(x, 0.3, true, reference_generator);
  CHECK(fused_generator.counter() == reference_generator.counter());
}

TEST_CASE("dropout with p = 1 drops everything; p outside [0, 1] is an error") {
  Generator generator(4);
  const std::vector<float> y = nn::dropout(ones({10}), 1.0, true, generator).to_vector<float>();
  for (const float value : y) CHECK(value == 0.0f);
  CHECK_THROWS_WITH_AS(nn::dropout(ones({2, 3}), 1.5, true, generator), doctest::Contains("dropout: p must be in [0, 1], got 1.5 (x of shape (2, 3))"), Error);
}
