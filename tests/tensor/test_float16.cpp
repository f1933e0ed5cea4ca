// tg::float16 (tensor/float16.h): widening is exact for every half, and
// narrowing rounds as the F16C instruction VCVTPS2PH does (round to nearest,
// ties to even), checked against the instruction itself on every AVX2 CPU.
#include <doctest/doctest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <immintrin.h>

#include "tinygpt/tensor/dtype.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

__attribute__((target("f16c"))) uint16_t f16c_round(float value) {
  return static_cast<uint16_t>(_cvtss_sh(value, _MM_FROUND_TO_NEAREST_INT));
}

__attribute__((target("f16c"))) float f16c_widen(uint16_t half) { return _cvtsh_ss(half); }

bool is_nan_half(uint16_t half) { return (half & 0x7c00u) == 0x7c00u && (half & 0x3ffu) != 0; }

}  // namespace

TEST_CASE("float16: every half widens to the float F16C gives, and narrows back to itself") {
  for (uint32_t bits = 0; bits <= 0xffffu; ++bits) {
    const uint16_t half = static_cast<uint16_t>(bits);
    const float widened = float16::from_bits(half);
    if (is_nan_half(half)) {
      CHECK(std::isnan(widened));
      CHECK(is_nan_half(float16(widened).bits));
      continue;
    }
    REQUIRE(std::bit_cast<uint32_t>(widened) == std::bit_cast<uint32_t>(f16c_widen(half)));
    REQUIRE(float16(widened).bits == half);
  }
}

TEST_CASE("float16: float32 rounds to nearest, ties to even, as F16C does, over every exponent") {
  // Every float exponent, with mantissas that hit ties, just-above and just-below ties and random bits.
  Generator generator(20261127);
  const Tensor random = randint({4096}, 0, int64_t{1} << 23, generator);
  const int64_t* mantissas = random.data<int64_t>();
  const uint32_t edges[] = {0, 1, 0xfffu, 0x1000u, 0x1001u, 0x2fffu, 0x3000u, 0x7fffffu, 0x400000u, 0x401000u};
  int checked = 0;
  for (uint32_t sign : {0u, 0x80000000u}) {
    for (uint32_t exponent = 0; exponent <= 255; ++exponent) {
      auto check_one = [&](uint32_t mantissa) {
        const uint32_t word = sign | (exponent << 23) | (mantissa & 0x7fffffu);
        const float value = std::bit_cast<float>(word);
        const uint16_t ours = float16(value).bits, theirs = f16c_round(value);
        if (std::isnan(value)) {
          CHECK(is_nan_half(ours));
        } else if (ours != theirs) {
          FAIL_CHECK("float bits 0x" << std::hex << word << " -> ours 0x" << ours << ", F16C 0x" << theirs);
        }
        ++checked;
      };
      for (uint32_t mantissa : edges) check_one(mantissa);
      for (int i = 0; i < 256; ++i) check_one(static_cast<uint32_t>(mantissas[(exponent * 16 + i) % 4096]));
    }
  }
  CHECK(checked == 2 * 256 * 266);
}

TEST_CASE("float16 tensors convert to float32 and bfloat16 element by element") {
  const Tensor halves = Tensor::empty({4}, DType::Float16);
  const uint16_t bits[] = {0x3c00u, 0xc000u, 0x0001u, 0x7bffu};  // 1, -2, the smallest subnormal, 65504
  for (int i = 0; i < 4; ++i) halves.data<float16>()[i] = float16::from_bits(bits[i]);
  const Tensor floats = Tensor::empty({4}, DType::Float32);
  raw::copy_(floats, halves);
  CHECK(floats.data<float>()[0] == 1.0f);
  CHECK(floats.data<float>()[1] == -2.0f);
  CHECK(floats.data<float>()[2] == std::ldexp(1.0f, -24));
  CHECK(floats.data<float>()[3] == 65504.0f);
  CHECK(std::string(dtype_name(DType::Float16)) == "float16");
  CHECK(dtype_size(DType::Float16) == 2);
}
