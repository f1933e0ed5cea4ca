// float16: IEEE 754 half precision (1 sign, 5 exponent, 10 mantissa bits), the
// format some published weights are stored in (Llama 2's safetensors, for one).
// tinygpt only stores it: a float16 tensor is read from a file and converted to
// float32 (exactly: every half is a float) or to bfloat16 on the way into a model.
//
// float32 -> float16 rounds to nearest, ties to even, as torch.float16 and the
// F16C instruction VCVTPS2PH do: overflow becomes infinity, tiny values become
// half subnormals or zero, NaN stays NaN (quiet).
#pragma once
#include <bit>
#include <cstdint>

namespace tg {

struct float16 {
  uint16_t bits = 0;

  float16() = default;
  // Implicit both ways, like bfloat16 (tensor/bfloat16.h).
  float16(float value) : bits(round_to_float16_bits(value)) {}
  operator float() const { return std::bit_cast<float>(widen_to_float_bits(bits)); }

  static float16 from_bits(uint16_t bits) {
    float16 value;
    value.bits = bits;
    return value;
  }

  static constexpr uint32_t widen_to_float_bits(uint16_t half) {
    const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
    const uint32_t exponent = (half >> 10) & 0x1fu;
    uint32_t mantissa = half & 0x3ffu;
    if (exponent == 0x1f) return sign | 0x7f800000u | (mantissa << 13);  // infinity or NaN (payload kept)
    if (exponent != 0) return sign | ((exponent + 112) << 23) | (mantissa << 13);  // 112 = 127 - 15
    if (mantissa == 0) return sign;                                               // +-0
    // A subnormal half, 0.m * 2^-14: normalise it (a float has room for it as a normal number).
    int shift = 0;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    return sign | (static_cast<uint32_t>(113 - shift) << 23) | ((mantissa & 0x3ffu) << 13);
  }

  static constexpr uint16_t round_to_float16_bits(float value) {
    const uint32_t word = std::bit_cast<uint32_t>(value);
    const uint16_t sign = static_cast<uint16_t>((word >> 16) & 0x8000u);
    const uint32_t magnitude = word & 0x7fffffffu;
    if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));  // NaN
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds past 65504: infinity
    if (magnitude >= 0x38800000u) {  // a normal half (2^-14 and up)
      const uint32_t rebased = magnitude - (112u << 23);  // exponent rebased from 127 to 15, mantissa kept
      const uint32_t lowest_kept_bit = (rebased >> 13) & 1u;
      return static_cast<uint16_t>(sign | ((rebased + 0xfffu + lowest_kept_bit) >> 13));
    }
    if (magnitude < 0x33000000u) return sign;  // below half the smallest subnormal (2^-25): zero
    // A subnormal half: the value's 24-bit significand shifted right to units of 2^-24, rounded to even.
    const uint32_t exponent = magnitude >> 23;
    const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126 - exponent;  // 14..24: value = significand * 2^(exponent - 150) = units >> shift
    const uint32_t units = significand >> shift;
    const uint32_t remainder = significand & ((1u << shift) - 1u), halfway = 1u << (shift - 1);
    const bool round_up = remainder > halfway || (remainder == halfway && (units & 1u));
    return static_cast<uint16_t>(sign | (units + (round_up ? 1u : 0u)));
  }
};

static_assert(sizeof(float16) == 2);

}  // namespace tg
