#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "tinygpt/nn/functional/adamw.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"

using namespace tg;

TEST_CASE("adamw_step: two steps by hand") {
  // lr 0.1, weight decay 0.01, torch's defaults otherwise; p = 1, g = 0.5 then -0.25.
  // step 1: p = 0.999; m = 0.05; v = 0.00025; p -= 0.1 * (0.05/0.1) / (sqrt(0.00025/0.001) + 1e-8)
  //         = 0.999 - 0.1 * 0.5 / 0.50000001 = 0.899000002
  // step 2: p = 0.899 * 0.999; m = 0.045 - 0.025 = 0.02; v = 0.999 * 0.00025 + 0.001 * 0.0625 = 0.00031225;
  //         p -= 0.1 * (0.02 / 0.19) / (sqrt(0.00031225 / 0.001999) + 1e-8) = 0.8714672987
  float param = 1.0f, m = 0.0f, v = 0.0f;
  const nn::AdamWHyperparameters hyperparameters{.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
  float grad = 0.5f;
  nn::adamw_step(&param, &grad, &m, &v, 1, hyperparameters, 1);
  CHECK(param == doctest::Approx(0.899000002).epsilon(1e-6));
  CHECK(m == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(v == doctest::Approx(0.00025).epsilon(1e-6));
  grad = -0.25f;
  nn::adamw_step(&param, &grad, &m, &v, 1, hyperparameters, 2);
  CHECK(param == doctest::Approx(0.8714672987).epsilon(1e-6));
  CHECK(m == doctest::Approx(0.02).epsilon(1e-6));
  CHECK(v == doctest::Approx(0.00031225).epsilon(1e-6));
}

TEST_CASE("adamw_step agrees with torch.optim.AdamW(foreach=False) to an ulp") {
  // Printed by torch 1.13 for params (1, -2, 0.5), lr 0.1, weight decay 0.01,
  // gradients (0.5, 0.25, -1) then (-0.25, 0.75, 2).
  std::vector<float> param{1.0f, -2.0f, 0.5f}, m(3, 0.0f), v(3, 0.0f);
  const std::vector<std::vector<float>> grads{{0.5f, 0.25f, -1.0f}, {-0.25f, 0.75f, 2.0f}};
  const std::vector<std::vector<float>> torch_params{{0.899000049f, -2.09800005f, 0.5995f},
                                                     {0.871467352f, -2.18768001f, 0.562290132f}};
  const nn::AdamWHyperparameters hyperparameters{.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.01f};
  for (int step = 1; step <= 2; ++step) {
    nn::adamw_step(param.data(), grads[step - 1].data(), m.data(), v.data(), 3, hyperparameters, step);
    for (int i = 0; i < 3; ++i) {
      const float expected = torch_params[step - 1][i];
      CHECK(std::abs(param[i] - expected) <= 2 * (std::nextafter(std::abs(expected), INFINITY) - std::abs(expected)));
    }
  }
}

TEST_CASE("adamw_step checks its step and betas") {
  float p = 0, g = 0, m = 0, v = 0;
  CHECK_THROWS_WITH_AS(nn::adamw_step(&p, &g, &m, &v, 1, {.lr = 0.1f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f}, 0), doctest::Contains("adamw_step: step is 1-based, got 0"), Error);
  CHECK_THROWS_WITH_AS(nn::adamw_step(&p, &g, &m, &v, 1, {.lr = 0.1f, .beta1 = 1.0f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.0f}, 1), doctest::Contains("betas must be in [0, 1), got (1, 0.999)"), Error);
}

TEST_CASE("adamw_step over slices: each slice updated with its own hyperparameters, the same for any number of threads") {
  // Three slices of a 300,000-element buffer (above the parallel threshold), with
  // a gap left alone; the threads' shares end inside slices.
  const int64_t size = 300000;
  const nn::AdamWHyperparameters decayed{.lr = 0.01f, .beta1 = 0.9f, .beta2 = 0.99f, .eps = 1e-8f, .weight_decay = 0.1f};
  nn::AdamWHyperparameters undecayed = decayed;
  undecayed.weight_decay = 0.0f;
  const std::vector<nn::AdamWSlice> slices = {{0, 0, 100003, decayed}, {100003, 100003, 17, undecayed}, {100100, 100100, 199900, decayed}};
  std::vector<float> grad(size);
  for (int64_t i = 0; i < size; ++i) grad[i] = std::sin(0.001f * static_cast<float>(i));
  const auto run = [&](int threads) {
    set_num_threads(threads);
    std::vector<float> param(size, 1.0f), m(size, 0.0f), v(size, 0.0f);
    for (int step = 1; step <= 2; ++step) nn::adamw_step(param.data(), grad.data(), m.data(), v.data(), slices, step);
    return param;
  };
  const int threads_before = num_threads();
  const std::vector<float> one = run(1), two = run(2), three = run(3);
  set_num_threads(threads_before);
  CHECK(one == two);
  CHECK(one == three);
  // Each slice as its own call, one by one, gives the same numbers; the gap is untouched.
  std::vector<float> param(size, 1.0f), m(size, 0.0f), v(size, 0.0f);
  for (int step = 1; step <= 2; ++step)
    for (const nn::AdamWSlice& slice : slices)
      nn::adamw_step(param.data() + slice.offset, grad.data() + slice.offset, m.data() + slice.offset,
                     v.data() + slice.offset, slice.count, slice.hyperparameters, step);
  CHECK(param == one);
  CHECK(one[100050] == 1.0f);
  CHECK_THROWS_WITH_AS(nn::adamw_step(param.data(), grad.data(), m.data(), v.data(), {{0, 0, -1, decayed}}, 1),
                       doctest::Contains("offset, state_offset and count >= 0"), Error);
}
