// Causal attention with bfloat16 products (nn::causal_attention(..., BFloat16),
// tensor/cpu/attention_kernels_avx512_bf16.h): its forward against the same
// formulas on the rounded operands, forward and backward against float32
// within bfloat16's rounding, and, on a CPU without AVX512-BF16 (or with
// TINYGPT_ISA=avx2), exactly float32's numbers.
#include <doctest/doctest.h>

#include <cmath>

#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/tensor/cpu/attention_kernels_avx512_bf16.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "test_functional_helpers.h"
#include "tests/bfloat16_rounding.h"

using namespace tg;

namespace {

bool has_bfloat16_kernels() { return cpu::bf16_gemm_kernel() == cpu::Bf16GemmKernel::avx512_bf16; }

Tensor attention_bf16(const std::vector<Tensor>& in) {
  return nn::causal_attention(in[0], in[1], in[2], DType::BFloat16);
}
Tensor attention_float32(const std::vector<Tensor>& in) { return nn::causal_attention(in[0], in[1], in[2]); }
// x with the values of x rounded to bfloat16 (exactly: x + (r - x) is r) and
// x's gradient passed straight through.
Tensor rounded(const Tensor& x) { return x + (testing::rounded_to_bfloat16(x) - x.detach()); }
// The float32 composition on q, k, v rounded to bfloat16: what the bfloat16
// products compute but for the rounding of the weights, dy and dS between them.
Tensor reference_on_rounded(const std::vector<Tensor>& in) {
  return nn::causal_attention_reference(rounded(in[0]), rounded(in[1]), rounded(in[2]));
}

cpu::HeadRows<float> contiguous_head_rows(const Tensor& x) {  // x (B, NH, T, HS) contiguous
  return {x.data<float>(), x.stride(0), x.stride(1), x.stride(2)};
}

struct Inputs {
  std::vector<Tensor> qkv;
  const char* what;
};

std::vector<Inputs> shapes(Generator& generator) {
  std::vector<Inputs> cases;
  // Several query blocks of both sizes, a head size that is neither a whole
  // vector nor even, more keys than queries at an odd offset.
  cases.push_back({{test::random_leaf({2, 3, 70, 16}, generator), test::random_leaf({2, 3, 70, 16}, generator),
                    test::random_leaf({2, 3, 70, 16}, generator)}, "Tq == Tk = 70, HS 16"});
  cases.push_back({{test::random_leaf({1, 2, 37, 7}, generator), test::random_leaf({1, 2, 37, 7}, generator),
                    test::random_leaf({1, 2, 37, 7}, generator)}, "Tq == Tk = 37, HS 7"});
  cases.push_back({{test::random_leaf({1, 2, 33, 64}, generator), test::random_leaf({1, 2, 66, 64}, generator),
                    test::random_leaf({1, 2, 66, 64}, generator)}, "Tq 33 < Tk 66, HS 64"});
  return cases;
}

}  // namespace

TEST_CASE("attention in bfloat16: the weights saved are the rounded softmax, the output them times the rounded v") {
  if (!has_bfloat16_kernels()) return;  // the kernels need AVX512-BF16
  Generator generator(21);
  const int64_t batch = 2, heads = 2, positions = 45, head_size = 24;
  const Tensor q = randn({batch, heads, positions, head_size}, generator);
  const Tensor k = randn({batch, heads, positions, head_size}, generator);
  const Tensor v = randn({batch, heads, positions, head_size}, generator);
  const cpu::AttentionShape shape{batch, heads, positions, positions, head_size};
  Tensor y = Tensor::empty({batch, positions, heads * head_size}, DType::Float32);
  Tensor weights = Tensor::empty({batch, heads, positions, positions}, DType::BFloat16);  // saved in bfloat16
  cpu::isa_avx512_bf16::attention_forward_bf16(contiguous_head_rows(q), contiguous_head_rows(k),
                                               contiguous_head_rows(v), y.data<float>(), weights.data<bfloat16>(),
                                               shape);
  const Tensor q16 = testing::rounded_to_bfloat16(q), k16 = testing::rounded_to_bfloat16(k);
  const Tensor v16 = testing::rounded_to_bfloat16(v);
  const std::vector<float> qs = q16.to_vector<float>(), ks = k16.to_vector<float>(), vs = v16.to_vector<float>();
  Tensor widened_weights = Tensor::empty(weights.shape(), DType::Float32);
  raw::copy_(widened_weights, weights);  // exact
  const std::vector<float> p16 = widened_weights.to_vector<float>();
  const std::vector<float> ys = y.to_vector<float>();
  double worst_weight = 0, worst_output = 0;
  for (int64_t head = 0; head < batch * heads; ++head) {
    const int64_t b = head / heads, h = head % heads;
    for (int64_t i = 0; i < positions; ++i) {
      // The weights: the softmax of the scaled products of the rounded q and k, in double.
      std::vector<double> scores(static_cast<size_t>(i + 1));
      double largest = -INFINITY, total = 0;
      for (int64_t j = 0; j <= i; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < head_size; ++d)
          dot += static_cast<double>(qs[(head * positions + i) * head_size + d]) *
                 ks[(head * positions + j) * head_size + d];
        scores[j] = dot / std::sqrt(static_cast<double>(head_size));
        largest = std::max(largest, scores[j]);
      }
      for (double& score : scores) total += (score = std::exp(score - largest));
      for (int64_t j = 0; j <= i; ++j) {  // the keys query i sees: what the backward reads
        const double expected = scores[j] / total;
        // Rounded to bfloat16: within half a step, at most 2^-8 of the value, and a little more for float32 sums.
        const double error = std::abs(p16[(head * positions + i) * positions + j] - expected);
        worst_weight = std::max(worst_weight, error / (expected / 256 + 1e-6));
      }
      // y_i: the kernel's own weights, times the rounded values, summed exactly.
      for (int64_t d = 0; d < head_size; ++d) {
        double expected = 0;
        for (int64_t j = 0; j <= i; ++j)
          expected += static_cast<double>(p16[(head * positions + i) * positions + j]) *
                      vs[(head * positions + j) * head_size + d];
        const float actual = ys[(b * positions + i) * heads * head_size + h * head_size + d];
        worst_output = std::max(worst_output, std::abs(actual - expected));
      }
    }
  }
  CHECK(worst_weight <= 1.0);
  CHECK(worst_output < 1e-5);
}

TEST_CASE("attention in bfloat16: forward and gradients within bfloat16's rounding of float32's") {
  Generator generator(22);
  for (const Inputs& inputs : shapes(generator)) {
    INFO(inputs.what);
    if (!has_bfloat16_kernels()) {  // the products run in float32: float32's numbers exactly
      test::check_matches_reference(attention_bf16, attention_float32, inputs.qkv, 0.0);
      continue;
    }
    // Errors relative to each tensor's largest element. Beside the composition
    // on the rounded operands only the weights, dy and dS are rounded more: at
    // most 0.005 measured, about one of bfloat16's steps (2^-8 = 0.0039), so
    // two steps are allowed. Beside float32, with q, k, v rounded too: at most
    // 0.009 measured, so four steps.
    test::check_matches_reference(attention_bf16, reference_on_rounded, inputs.qkv, 2.0 / 256);
    test::check_matches_reference(attention_bf16, attention_float32, inputs.qkv, 4.0 / 256);
  }
}

TEST_CASE("attention in bfloat16 on the fused projection: the numbers of the views") {
  Generator generator(23);
  const Tensor qkv = test::random_leaf({2, 40, 3 * 2 * 16}, generator);
  const auto fused = [](const std::vector<Tensor>& in) { return nn::causal_attention_qkv(in[0], 2, DType::BFloat16); };
  const auto views = [](const std::vector<Tensor>& in) {
    const Tensor parts = reshape(in[0], {in[0].size(0), in[0].size(1), 3, 2, 16});
    const auto part = [&](int64_t index) { return permute(select(parts, 2, index), {0, 2, 1, 3}); };
    return nn::causal_attention(part(0), part(1), part(2), DType::BFloat16);
  };
  test::check_matches_reference(fused, views, {qkv}, 0.0);
}

TEST_CASE("attention in bfloat16 takes float32 q, k, v only") {
  Generator generator(24);
  const Tensor x = randn({1, 1, 4, 2}, generator, DType::Float64);
  CHECK_THROWS_WITH_AS(nn::causal_attention(x, x, x, DType::BFloat16),
                       doctest::Contains("causal_attention: products in bfloat16 take float32 q, k, v, got float64"),
                       Error);
}
