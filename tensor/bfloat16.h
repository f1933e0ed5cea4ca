// bfloat16: a float32's top 16 bits (sign, the same 8 exponent bits, 7 of the 23
// mantissa bits). The same range as float32 at 2-3 significant digits, so a
// float32 converts by rounding away the low half, and back by appending zeros.
//
// Rounding is to nearest, ties to even, as PyTorch's torch.bfloat16 and the
// AVX512-BF16 instruction VCVTNEPS2BF16 round; NaN stays NaN (quiet). Unlike
// that instruction, subnormal floats round like any other rather than to zero
// (tests/tensor/test_bfloat16_convert.cpp).
#pragma once
#include <bit>
#include <cstdint>

namespace tg {

struct bfloat16 {
  uint16_t bits = 0;

  bfloat16() = default;
  // Implicit both ways, like a narrower float type: static_cast<bfloat16>(1.5), float(x).
  bfloat16(float value) : bits(round_to_bfloat16_bits(value)) {}
  operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

  static bfloat16 from_bits(uint16_t bits) {
    bfloat16 value;
    value.bits = bits;
    return value;
  }

  static constexpr uint16_t round_to_bfloat16_bits(float value) {
    const uint32_t word = std::bit_cast<uint32_t>(value);
    if ((word & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((word >> 16) | 0x0040u);  // NaN: keep it quiet
    const uint32_t lowest_kept_bit = (word >> 16) & 1u;
    return static_cast<uint16_t>((word + 0x7fffu + lowest_kept_bit) >> 16);
  }
};

static_assert(sizeof(bfloat16) == 2);

}  // namespace tg
