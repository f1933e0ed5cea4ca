// tensor/cpu/kernel_table.h: the AVX2 and AVX-512 copies of the fused
// kernels compute the same numbers (to float rounding: wider vectors sum in
// another order), and TINYGPT_ISA picks between them. The suites test_nn_avx2,
// test_models_avx2 and test_training_avx2 run every other test on the AVX2 copy as well.
#include <limits>
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/random.h"

using namespace tg;
using namespace tg::cpu;
using nn::GeluApproximation;

namespace {

std::vector<float> random_values(int64_t count, uint64_t seed) {
  Generator generator(seed);
  const Tensor values = randn({count}, generator);
  return {values.data<float>(), values.data<float>() + count};
}

// max |a - b| / max(1, max |b|)
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double difference = 0, scale = 1;
  for (size_t i = 0; i < a.size(); ++i) {
    difference = std::max(difference, std::abs(static_cast<double>(a[i]) - b[i]));
    scale = std::max(scale, std::abs(static_cast<double>(b[i])));
  }
  return difference / scale;
}

}  // namespace

TEST_CASE("The kernel tables: AVX2 and AVX-512 copies agree (LayerNorm, RMSNorm, GELU, SwiGLU, ReLU^2, attention, RoPE, cross-entropy)") {
  if (!cpu_has_avx512()) {
    MESSAGE("this CPU has no AVX-512: only the AVX2 copy can run here");
    return;
  }
  const FunctionalKernels<float>& avx2 = functional_kernels<float>(Isa::avx2);
  const FunctionalKernels<float>& avx512 = functional_kernels<float>(Isa::avx512);
  CHECK(&avx2 != &avx512);
  const int64_t rows = 37, channels = 100;  // not multiples of 8 or 16: the vector loops' tails run too

  SUBCASE("LayerNorm forward and backward") {
    const auto x = random_values(rows * channels, 1), weight = random_values(channels, 2),
               bias = random_values(channels, 3), dy = random_values(rows * channels, 4);
    std::vector<std::vector<float>> outputs[2];
    for (int copy = 0; copy < 2; ++copy) {
      const FunctionalKernels<float>& kernels = copy == 0 ? avx2 : avx512;
      std::vector<float> y(rows * channels), mean(rows), rstd(rows), dx(rows * channels), dweight(channels),
          dbias(channels);
      kernels.layer_norm_forward(x.data(), weight.data(), bias.data(), y.data(), mean.data(), rstd.data(), rows,
                                 channels, 1e-5);
      kernels.layer_norm_backward(dy.data(), x.data(), weight.data(), mean.data(), rstd.data(), dx.data(),
                                  dweight.data(), dbias.data(), rows, channels);
      outputs[copy] = {y, mean, rstd, dx, dweight, dbias};
    }
    for (size_t i = 0; i < outputs[0].size(); ++i) CHECK(relative_difference(outputs[1][i], outputs[0][i]) < 1e-6);
  }

  SUBCASE("GELU forward and backward, both approximations") {
    const auto x = random_values(1000, 5), dy = random_values(1000, 6);
    for (const GeluApproximation approximation : {GeluApproximation::Tanh, GeluApproximation::Erf}) {
      std::vector<float> y[2], dx[2];
      for (int copy = 0; copy < 2; ++copy) {
        const FunctionalKernels<float>& kernels = copy == 0 ? avx2 : avx512;
        y[copy].resize(1000);
        dx[copy].resize(1000);
        kernels.gelu_forward(x.data(), y[copy].data(), 1000, approximation);
        kernels.gelu_backward(dy.data(), x.data(), dx[copy].data(), 1000, approximation);
      }
      CHECK(relative_difference(y[1], y[0]) < 1e-6);
      CHECK(relative_difference(dx[1], dx[0]) < 1e-6);
    }
  }

  SUBCASE("causal attention forward and backward") {
    const AttentionShape shape{2, 3, 70, 70, 16};  // two query blocks
    const int64_t elements = shape.batch * shape.heads * shape.queries * shape.head_size;
    const auto q = random_values(elements, 7), k = random_values(elements, 8), v = random_values(elements, 9),
               dy = random_values(elements, 10);
    const int64_t head = shape.queries * shape.head_size;
    const HeadRows<float> q_rows{q.data(), shape.heads * head, head, shape.head_size},
        k_rows{k.data(), shape.heads * head, head, shape.head_size},
        v_rows{v.data(), shape.heads * head, head, shape.head_size};
    std::vector<std::vector<float>> outputs[2];
    for (int copy = 0; copy < 2; ++copy) {
      const FunctionalKernels<float>& kernels = copy == 0 ? avx2 : avx512;
      // The outputs start as NaN: every element must be written (the backward
      // overwrites dk and dv with the first query block's products, beta 0).
      const float unwritten = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> y(elements, unwritten), weights(shape.batch * shape.heads * shape.queries * shape.keys),
          dq(elements, unwritten), dk(elements, unwritten), dv(elements, unwritten);
      kernels.attention_forward(q_rows, k_rows, v_rows, y.data(), weights.data(), shape);
      kernels.attention_backward(dy.data(), weights.data(), q_rows, k_rows, v_rows, dq.data(), dk.data(), dv.data(),
                                 shape.channels(), shape);
      outputs[copy] = {y, weights, dq, dk, dv};
      for (const std::vector<float>* written : {&y, &dq, &dk, &dv})
        CHECK(std::none_of(written->begin(), written->end(), [](float value) { return std::isnan(value); }));
    }
    for (size_t i = 0; i < outputs[0].size(); ++i) CHECK(relative_difference(outputs[1][i], outputs[0][i]) < 1e-5);
  }

  SUBCASE("cross-entropy forward and backward") {
    const int64_t classes = 1000;
    const auto logits = random_values(rows * classes, 14);
    std::vector<int64_t> targets(rows);
    for (int64_t row = 0; row < rows; ++row) targets[row] = (row * 37) % classes;
    targets[3] = -100;  // ignored
    double loss[2];
    std::vector<std::vector<float>> outputs[2];
    for (int copy = 0; copy < 2; ++copy) {
      const FunctionalKernels<float>& kernels = copy == 0 ? avx2 : avx512;
      std::vector<float> row_stats(2 * rows), dlogits(rows * classes);
      loss[copy] = kernels.cross_entropy_forward(logits.data(), targets.data(), row_stats.data(), rows, classes, -100);
      kernels.cross_entropy_backward(logits.data(), targets.data(), row_stats.data(), 0.5f, dlogits.data(), rows,
                                     classes, -100);
      outputs[copy] = {row_stats, dlogits};
    }
    CHECK(loss[1] == doctest::Approx(loss[0]).epsilon(1e-6));
    for (size_t i = 0; i < outputs[0].size(); ++i) CHECK(relative_difference(outputs[1][i], outputs[0][i]) < 1e-6);
  }

  SUBCASE("RoPE, both pairings") {
    const Shape shape{2, 3, 5, 8};
    const auto x = random_values(2 * 3 * 5 * 8, 11), cosines = random_values(5 * 4, 12), sines = random_values(5 * 4, 13);
    for (const nn::RopePairing pairing : {nn::RopePairing::Interleaved, nn::RopePairing::Half}) {
      std::vector<float> y[2];
      for (int copy = 0; copy < 2; ++copy) {
        y[copy].resize(x.size());
        (copy == 0 ? avx2 : avx512).rope(x.data(), {120, 40, 8, 1}, y[copy].data(), shape, cosines, sines, 1.0f, pairing);
      }
      CHECK(relative_difference(y[1], y[0]) < 1e-6);
    }
  }

  SUBCASE("RMSNorm forward and backward, with and without weight") {
    const auto x = random_values(rows * channels, 21), weight = random_values(channels, 22),
               dy = random_values(rows * channels, 23);
    for (const float* w : {weight.data(), static_cast<const float*>(nullptr)}) {
      std::vector<std::vector<float>> outputs[2];
      for (int copy = 0; copy < 2; ++copy) {
        const FunctionalKernels<float>& kernels = copy == 0 ? avx2 : avx512;
        std::vector<float> y(rows * channels), rstd(rows), dx(rows * channels), dweight(channels, 0.0f);
        kernels.rms_norm_forward(x.data(), w, y.data(), rstd.data(), rows, channels, 1e-6);
        kernels.rms_norm_backward(dy.data(), x.data(), w, rstd.data(), dx.data(), w ? dweight.data() : nullptr, rows,
                                  channels);
        outputs[copy] = {y, rstd, dx, dweight};
      }
      for (size_t i = 0; i < outputs[0].size(); ++i) CHECK(relative_difference(outputs[1][i], outputs[0][i]) < 1e-5);
    }
  }

  SUBCASE("SwiGLU and ReLU^2 forward and backward") {
    const int64_t hidden = 45;
    const auto x = random_values(rows * 2 * hidden, 31), dy = random_values(rows * 2 * hidden, 32);
    std::vector<std::vector<float>> outputs[2];
    for (int copy = 0; copy < 2; ++copy) {
      const FunctionalKernels<float>& kernels = copy == 0 ? avx2 : avx512;
      std::vector<float> y(rows * hidden), dx(rows * 2 * hidden), y2(rows * 2 * hidden), dx2(rows * 2 * hidden);
      kernels.swiglu_forward(x.data(), y.data(), rows, hidden);
      kernels.swiglu_backward(dy.data(), x.data(), dx.data(), rows, hidden);
      kernels.relu_squared_forward(x.data(), y2.data(), rows * 2 * hidden);
      kernels.relu_squared_backward(dy.data(), x.data(), dx2.data(), rows * 2 * hidden);
      outputs[copy] = {y, dx, y2, dx2};
    }
    for (size_t i = 0; i < outputs[0].size(); ++i) CHECK(relative_difference(outputs[1][i], outputs[0][i]) < 1e-6);
  }
}

TEST_CASE("active_isa: AVX-512 when the CPU has it, unless TINYGPT_ISA=avx2") {
  const char* asked = std::getenv("TINYGPT_ISA");
  const Isa expected = asked && std::string(asked) == "avx2" ? Isa::avx2 : (cpu_has_avx512() ? Isa::avx512 : Isa::avx2);
  CHECK(active_isa() == expected);
  CHECK(&functional_kernels<float>() == &functional_kernels<float>(expected));
}
