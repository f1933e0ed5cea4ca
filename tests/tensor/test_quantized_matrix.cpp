// Reduced-precision weights (tensor/bfloat16.h, tensor/quantized_matrix.h):
// rounding to bfloat16 as torch does, int8 blocks of 32 within half a step of
// each weight, activations rounded the same way, the embedding lookup, and the
// checks a matrix read from a file must pass.
#include <doctest/doctest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <vector>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/quantized_matrix.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

uint16_t bits_of(float value) { return bfloat16(value).bits; }
float from_word(uint32_t word) { return std::bit_cast<float>(word); }

// A (rows, cols) float32 matrix of N(0, spread) weights.
Tensor random_matrix(int64_t rows, int64_t cols, double spread, uint64_t seed) {
  Generator generator(seed);
  return normal({rows, cols}, 0.0, spread, generator);
}

}  // namespace

TEST_CASE("bfloat16: rounds to nearest, ties to even, as torch.bfloat16") {
  CHECK(bits_of(1.0f) == 0x3f80);
  CHECK(bits_of(-2.0f) == 0xc000);
  CHECK(bits_of(from_word(0x3f808000)) == 0x3f80);  // halfway, the kept bit even: down
  CHECK(bits_of(from_word(0x3f818000)) == 0x3f82);  // halfway, the kept bit odd: up
  CHECK(bits_of(from_word(0x3f808001)) == 0x3f81);  // above halfway: up
  CHECK(bits_of(from_word(0x3f807fff)) == 0x3f80);  // below halfway: down
  CHECK(bits_of(from_word(0x7f7fffff)) == 0x7f80);  // the largest float rounds up to inf, as in torch
  CHECK(bits_of(std::numeric_limits<float>::infinity()) == 0x7f80);
  const uint16_t nan = bits_of(std::numeric_limits<float>::quiet_NaN());
  CHECK((nan & 0x7f80) == 0x7f80);
  CHECK((nan & 0x007f) != 0);  // still NaN, not inf
  CHECK(std::isnan(float(bfloat16::from_bits(bits_of(from_word(0x7f800001))))));  // a signalling NaN stays NaN
  CHECK(float(bfloat16(3.140625f)) == 3.140625f);  // exactly representable: unchanged
}

TEST_CASE("quantize_matrix: bfloat16 keeps 8 significant bits of each weight") {
  const Tensor weight = random_matrix(7, 45, 1.0, 1);
  const QuantizedMatrix matrix = quantize_matrix(weight, DType::BFloat16);
  CHECK(matrix.format() == DType::BFloat16);
  CHECK(matrix.values.shape() == Shape{7, 45});
  CHECK_FALSE(matrix.scales.defined());
  const std::vector<float> before = weight.to_vector<float>(), after = dequantize(matrix).to_vector<float>();
  for (size_t index = 0; index < before.size(); ++index) {
    CHECK(std::abs(after[index] - before[index]) <= std::abs(before[index]) * std::ldexp(1.0f, -8));
    CHECK(after[index] == float(bfloat16(before[index])));
  }
}

TEST_CASE("quantize_matrix: int8 blocks of 32, the last one shorter, each weight within half a step") {
  for (int64_t cols : {32, 45, 64, 96, 100}) {
    CAPTURE(cols);
    Tensor weight = random_matrix(5, cols, 0.02, 2 + static_cast<uint64_t>(cols));
    fill_(raw::narrow(raw::select(weight, 0, 3), 0, 0, std::min<int64_t>(cols, 32)), 0.0);  // an all-zero block
    const QuantizedMatrix matrix = quantize_matrix(weight, DType::Int8);
    const int64_t blocks = (cols + 31) / 32;
    REQUIRE(matrix.scales.shape() == Shape{5, blocks});
    CHECK(cpu::int8_blocks_per_row(cols) == blocks);
    const std::vector<float> before = weight.to_vector<float>(), after = dequantize(matrix).to_vector<float>();
    const std::vector<float> scales = matrix.scales.to_vector<float>();
    const std::vector<int8_t> values = matrix.values.to_vector<int8_t>();
    for (int64_t row = 0; row < 5; ++row) {
      for (int64_t block = 0; block < blocks; ++block) {
        float largest = 0;
        for (int64_t col = block * 32; col < std::min(cols, block * 32 + 32); ++col)
          largest = std::max(largest, std::abs(before[row * cols + col]));
        CHECK(scales[row * blocks + block] == doctest::Approx(largest / 127.0f).epsilon(1e-6));
      }
      for (int64_t col = 0; col < cols; ++col) {
        const float scale = scales[row * blocks + col / 32];
        CHECK(values[row * cols + col] >= -127);
        CHECK(std::abs(after[row * cols + col] - before[row * cols + col]) <= 0.5f * scale * 1.0001f);
      }
    }
    CHECK(scales[3 * blocks] == 0.0f);  // the zero block: scale 0, values 0, widened back to 0
    CHECK(after[3 * cols] == 0.0f);
  }
}

TEST_CASE("quantize_matrix: int8 values are round(w / scale), halves to even, for whole blocks and the shorter last one") {
  // Block 0's largest |w| is 127, so its scale is 1 and w / scale is w itself:
  // halves round to the even neighbour. Block 1 holds random numbers, block 2
  // (8 columns: the shorter block) halves again.
  const int64_t cols = 72;
  std::vector<float> weights(cols);
  const std::vector<float> halves = {0.5f, 1.5f, 2.5f, -0.5f, -1.5f, -2.5f, 126.5f, -126.5f};
  for (int64_t col = 0; col < 32; ++col) weights[col] = halves[col % halves.size()];
  weights[31] = 127.0f;
  const std::vector<float> random = random_matrix(1, 32, 0.3, 9).to_vector<float>();
  std::copy(random.begin(), random.end(), weights.begin() + 32);
  for (int64_t col = 64; col < cols; ++col) weights[col] = halves[col - 64];
  weights[71] = 127.0f;
  const QuantizedMatrix matrix = quantize_matrix(from_vector<float>(weights, {1, cols}), DType::Int8);
  const std::vector<int8_t> values = matrix.values.to_vector<int8_t>();
  const std::vector<float> scales = matrix.scales.to_vector<float>();
  CHECK(scales[0] == 1.0f);
  CHECK(scales[2] == 1.0f);
  const std::vector<int> expected_halves = {0, 2, 2, 0, -2, -2, 126, -126};
  for (int64_t col = 0; col < cols; ++col) {
    CAPTURE(col);
    const int64_t block = col / 32;
    float largest = 0;
    for (int64_t other = block * 32; other < std::min(cols, block * 32 + 32); ++other)
      largest = std::max(largest, std::abs(weights[other]));
    const float scale = largest / 127.0f;
    CHECK(scales[block] == scale);
    const float expected = std::clamp(std::nearbyint(weights[col] * (1.0f / scale)), -127.0f, 127.0f);
    CHECK(values[col] == static_cast<int8_t>(expected));
    if (block != 1 && col != 31 && col != 71) CHECK(values[col] == expected_halves[col % 32 % halves.size()]);
  }
}

TEST_CASE("quantize_matrix: refuses what it cannot represent") {
  CHECK_THROWS_WITH_AS(quantize_matrix(zeros({2, 3}, DType::Float64), DType::Int8),
                       doctest::Contains("needs a float32 matrix, got float64"), Error);
  CHECK_THROWS_WITH_AS(quantize_matrix(zeros({4}), DType::Int8), doctest::Contains("of shape (4,)"), Error);
  CHECK_THROWS_WITH_AS(quantize_matrix(zeros({2, 3}), DType::Int64), doctest::Contains("bfloat16 and int8, not int64"),
                       Error);
  Tensor weight = zeros({2, 3});
  weight.data<float>()[4] = std::numeric_limits<float>::infinity();
  CHECK_THROWS_WITH_AS(quantize_matrix(weight, DType::BFloat16), doctest::Contains("weight 1, 1 is inf"), Error);
}

TEST_CASE("quantize_activations: the same int8 blocks, with magnitudes and signs; a non-finite block gets a NaN scale") {
  std::vector<float> x(70);
  for (size_t index = 0; index < x.size(); ++index) x[index] = 0.1f * static_cast<float>(index) - 1.7f;
  x[66] = -5.0f;  // a negative one in the second 64
  cpu::Int8Activations rounded;
  quantize_activations(x.data(), 70, rounded);
  REQUIRE(rounded.scales.size() == 3);
  REQUIRE(rounded.negative.size() == 2);
  CHECK(rounded.scales[0] == doctest::Approx(1.7f / 127));
  for (size_t index = 0; index < x.size(); ++index) {
    CAPTURE(index);
    CHECK(rounded.magnitudes[index] == std::abs(rounded.values[index]));
    CHECK(((rounded.negative[index / 64] >> (index % 64)) & 1) == (rounded.values[index] < 0 ? 1u : 0u));
    CHECK(std::abs(rounded.values[index] * rounded.scales[index / 32] - x[index]) <= 0.5f * rounded.scales[index / 32] * 1.0001f);
  }
  x[35] = std::numeric_limits<float>::quiet_NaN();
  quantize_activations(x.data(), 40, rounded);  // the buffers are reused
  CHECK(std::isnan(rounded.scales[1]));
  CHECK(rounded.values[35] == 0);
  CHECK_FALSE(std::isnan(rounded.scales[0]));
}

TEST_CASE("round_activations: each x rounded to bfloat16, and the same numbers widened") {
  const std::vector<float> x = {1.0f, 1.00390625f, 1.01171875f, -3.3f, 1e-40f, 0.0f};
  cpu::BFloat16Activations rounded;
  round_activations(x.data(), 6, rounded);
  REQUIRE(rounded.values.size() == 6);
  REQUIRE(rounded.widened.size() == 6);
  for (size_t index = 0; index < x.size(); ++index) {
    CHECK(rounded.values[index].bits == bfloat16(x[index]).bits);
    CHECK(rounded.widened[index] == static_cast<float>(bfloat16(x[index])));
  }
  CHECK(rounded.widened[1] == 1.0f);          // a tie rounds to even
  CHECK(rounded.widened[2] == 1.015625f);     // above the tie, up
}

TEST_CASE("embedding_quantized: the widened rows the ids name, in the ids' shape") {
  const Tensor table = random_matrix(11, 40, 0.5, 3);
  const Tensor ids = from_vector<int64_t>({3, 0, 10, 3, 7, 1}, {2, 3});
  for (DType format : {DType::BFloat16, DType::Int8}) {
    const QuantizedMatrix matrix = quantize_matrix(table, format);
    const Tensor rows = embedding_quantized(matrix, ids);
    REQUIRE(rows.shape() == Shape{2, 3, 40});
    const Tensor widened = dequantize(matrix);
    const std::vector<int64_t> id_values = ids.to_vector<int64_t>();
    for (size_t position = 0; position < id_values.size(); ++position)
      CHECK(raw::select(raw::view(rows, {6, 40}), 0, static_cast<int64_t>(position)).to_vector<float>() ==
            raw::select(widened, 0, id_values[position]).to_vector<float>());
    CHECK_THROWS_WITH_AS(embedding_quantized(matrix, from_vector<int64_t>({11}, {1})),
                         doctest::Contains("id 11 at position 0 is out of range for a vocabulary of 11 rows"), Error);
  }
}

TEST_CASE("check_quantized_matrix: what a file's matrix must be, said with the name") {
  const QuantizedMatrix good = quantize_matrix(random_matrix(3, 70, 0.1, 4), DType::Int8);
  CHECK_NOTHROW(check_quantized_matrix(good, "w"));
  CHECK_NOTHROW(check_quantized_matrix(quantize_matrix(random_matrix(3, 70, 0.1, 4), DType::BFloat16), "w"));

  CHECK_THROWS_WITH_AS(check_quantized_matrix({good.values, zeros({3, 2})}, "blocks.0.attn.qkv.weight"),
                       doctest::Contains("blocks.0.attn.qkv.weight: the scales of an int8 matrix (3, 70) must be "
                                         "float32 (3, 3) (one per block of 32 weights), got float32 (3, 2)"),
                       Error);
  CHECK_THROWS_WITH_AS(check_quantized_matrix({good.values, Tensor()}, "w"), doctest::Contains("needs its scales"), Error);
  CHECK_THROWS_WITH_AS(check_quantized_matrix({good.values, zeros({3, 3}, DType::Float64)}, "w"),
                       doctest::Contains("got float64 (3, 3)"), Error);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), -1.0f, std::numeric_limits<float>::infinity()}) {
    Tensor scales = raw::clone(good.scales);
    scales.data<float>()[4] = bad;
    CHECK_THROWS_WITH_AS(check_quantized_matrix({good.values, scales}, "w"),
                         doctest::Contains("scale 4 (row 1, block 1) is"), Error);
  }
  CHECK_THROWS_WITH_AS(check_quantized_matrix({zeros({3, 70}), Tensor()}, "w"),
                       doctest::Contains("bfloat16 or int8 values, got float32 of shape (3, 70)"), Error);
  CHECK_THROWS_WITH_AS(check_quantized_matrix({zeros({3, 70}, DType::BFloat16), good.scales}, "w"),
                       doctest::Contains("a bfloat16 matrix has no scales"), Error);
}
