// LoRA adapters (nn/lora.h): step 0 equals the base, the update by hand per row
// block, gradients of A and B (and the input) against central differences in
// float64 with and without dropout, a frozen base, and the errors.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <memory>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/init.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/lora.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using namespace tg::nn;

namespace {

// A Linear (in 6 -> out 8, with bias) of random weights, in `dtype`.
std::shared_ptr<Linear> random_linear(DType dtype, uint64_t seed) {
  auto linear = std::make_shared<Linear>(6, 8, true, dtype);
  Generator generator(seed);
  init::normal_(linear->weight(), 0, 0.5, generator);
  init::normal_(linear->bias(), 0, 0.5, generator);
  return linear;
}

// q, k, v row blocks of 4, 2 and 2 rows: grouped-query attention's shape.
std::vector<LoraPart> qkv_parts() { return {{"q", 4}, {"k", 2}, {"v", 2}}; }

}  // namespace

TEST_CASE("LoRA: at step 0 (B = 0) the adapted Linear computes exactly what its base does") {
  auto linear = random_linear(DType::Float32, 1);
  Generator generator(2);
  const Tensor x = randn({3, 5, 6}, generator);
  const std::vector<float> base = linear->forward(x).to_vector<float>();
  auto adapter = std::make_shared<LoraAdapter>(6, qkv_parts(), LoraSettings{.rank = 2, .alpha = 4, .dropout = 0}, nullptr);
  adapter->initialize(generator);
  linear->attach_lora(adapter);
  CHECK(linear->forward(x).to_vector<float>() == base);
  // A is drawn from U(-1/sqrt(in), 1/sqrt(in)), not left at zero.
  const std::vector<float> a = adapter->a(0).to_vector<float>();
  const float bound = 1.0f / std::sqrt(6.0f);
  CHECK(std::all_of(a.begin(), a.end(), [&](float v) { return std::abs(v) <= bound; }));
  CHECK(std::any_of(a.begin(), a.end(), [](float v) { return v != 0; }));
}

TEST_CASE("LoRA: each row block's update is (alpha / r) x A_j^T B_j^T, by hand") {
  auto linear = random_linear(DType::Float64, 3);
  Generator generator(4);
  auto adapter = std::make_shared<LoraAdapter>(6, qkv_parts(), LoraSettings{.rank = 3, .alpha = 6, .dropout = 0}, nullptr,
                                               DType::Float64);
  for (const auto& [name, parameter] : adapter->named_parameters()) init::normal_(parameter, 0, 1, generator);
  const Tensor x = randn({4, 6}, generator, DType::Float64);
  const Tensor base = linear->forward(x);  // (4, 8)
  linear->attach_lora(adapter);
  const Tensor y = linear->forward(x);
  CHECK(adapter->scale() == 2.0);
  int64_t row = 0;
  for (size_t j = 0; j < adapter->parts().size(); ++j) {
    const Tensor update = raw::matmul(raw::matmul(x, raw::transpose(adapter->a(j), 0, 1)), raw::transpose(adapter->b(j), 0, 1));
    const int64_t rows = adapter->parts()[j].rows;
    const std::vector<double> expected = update.to_vector<double>();
    const std::vector<double> actual = raw::narrow(y, 1, row, rows).to_vector<double>();
    const std::vector<double> base_part = raw::narrow(base, 1, row, rows).to_vector<double>();
    for (size_t i = 0; i < expected.size(); ++i) CHECK(actual[i] == doctest::Approx(base_part[i] + 2.0 * expected[i]).epsilon(1e-12));
    row += rows;
  }
}

TEST_CASE("LoRA: gradcheck of A, B and the input in float64, one block and three, with dropout") {
  for (const std::vector<LoraPart>& parts : {std::vector<LoraPart>{{"", 8}}, qkv_parts()}) {
    for (const double dropout : {0.0, 0.4}) {
      auto linear = random_linear(DType::Float64, 5);
      auto generator = std::make_shared<Generator>(6);
      auto adapter = std::make_shared<LoraAdapter>(6, parts, LoraSettings{.rank = 2, .alpha = 3, .dropout = dropout},
                                                   generator, DType::Float64);
      for (const auto& [name, parameter] : adapter->named_parameters()) init::normal_(parameter, 0, 1, *generator);
      linear->attach_lora(adapter);
      Tensor x = randn({2, 3, 6}, *generator, DType::Float64).set_requires_grad();
      std::vector<Tensor> inputs{x};
      for (const Tensor& parameter : adapter->parameters()) inputs.push_back(parameter);
      // The same dropout mask at every evaluation: the generator restarts each call.
      const GradcheckResult result = gradcheck(
          [&](const std::vector<Tensor>& in) {
            *generator = Generator(7);
            return linear->forward(in[0]);
          },
          inputs);
      INFO("parts ", parts.size(), ", dropout ", dropout, ": ", result.report);
      CHECK(result.ok);
    }
  }
}

TEST_CASE("LoRA: a row block left out (k, as PEFT's q and v targets leave it) keeps its base rows and has no factors") {
  auto linear = random_linear(DType::Float64, 11);
  Generator generator(12);
  const Tensor x = randn({3, 6}, generator, DType::Float64);
  const Tensor base = linear->forward(x);
  auto adapter = std::make_shared<LoraAdapter>(6, std::vector<LoraPart>{{"q", 4}, {"k", 2, false}, {"v", 2}},
                                               LoraSettings{.rank = 2, .alpha = 2, .dropout = 0}, nullptr, DType::Float64);
  for (const auto& [name, parameter] : adapter->named_parameters()) init::normal_(parameter, 0, 1, generator);
  CHECK(adapter->named_parameters().size() == 4);  // A_q, B_q, A_v, B_v
  linear->attach_lora(adapter);
  const Tensor y = linear->forward(x);
  CHECK(raw::narrow(y, 1, 4, 2).to_vector<double>() == raw::narrow(base, 1, 4, 2).to_vector<double>());
  CHECK(raw::narrow(y, 1, 0, 4).to_vector<double>() != raw::narrow(base, 1, 0, 4).to_vector<double>());
  Tensor input = randn({2, 6}, generator, DType::Float64).set_requires_grad();
  std::vector<Tensor> inputs{input};
  for (const Tensor& parameter : adapter->parameters()) inputs.push_back(parameter);
  const GradcheckResult result = gradcheck([&](const std::vector<Tensor>& in) { return linear->forward(in[0]); }, inputs);
  INFO(result.report);
  CHECK(result.ok);
}

TEST_CASE("LoRA: the base is frozen: its weight and bias get no gradient, the adapter's do") {
  auto linear = random_linear(DType::Float32, 8);
  Generator generator(9);
  auto adapter = std::make_shared<LoraAdapter>(6, std::vector<LoraPart>{{"", 8}}, LoraSettings{}, nullptr);
  adapter->initialize(generator);
  linear->attach_lora(adapter);
  CHECK_FALSE(linear->weight().requires_grad());
  CHECK_FALSE(linear->bias().requires_grad());
  const std::vector<std::pair<std::string, Tensor>> named = linear->named_parameters();
  REQUIRE(named.size() == 4);
  CHECK(named[2].first == "lora.A");
  CHECK(named[3].first == "lora.B");
  backward(sum(linear->forward(randn({4, 6}, generator))));
  CHECK_FALSE(linear->weight().grad().defined());
  CHECK_FALSE(linear->bias().grad().defined());
  CHECK(adapter->a(0).grad().defined());  // zero, since B is: dA = dh^T u with dh = dd B
  CHECK(adapter->b(0).grad().defined());
  const std::vector<float> db = adapter->b(0).grad().to_vector<float>();
  CHECK(std::any_of(db.begin(), db.end(), [](float v) { return v != 0; }));
}

TEST_CASE("LoRA: errors name what is wrong") {
  CHECK_THROWS_WITH(LoraAdapter(6, {{"", 8}}, LoraSettings{.rank = 0}, nullptr), doctest::Contains("rank must be a positive"));
  CHECK_THROWS_WITH(LoraAdapter(6, {{"", 8}}, LoraSettings{.rank = 2, .alpha = 4, .dropout = 1}, nullptr),
                    doctest::Contains("dropout must be in [0, 1)"));
  CHECK_THROWS_WITH(LoraAdapter(6, {{"q", 4, false}, {"v", 4, false}}, LoraSettings{}, nullptr),
                    doctest::Contains("no row block is adapted"));
  auto linear = random_linear(DType::Float32, 10);
  CHECK_THROWS_WITH(linear->attach_lora(std::make_shared<LoraAdapter>(6, std::vector<LoraPart>{{"", 7}}, LoraSettings{}, nullptr)),
                    doctest::Contains("does not fit a Linear of 6 -> 8"));
}
