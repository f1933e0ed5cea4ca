// cpu::float_to_bfloat16_rows and cpu::bfloat16_to_float_rows (tensor/cpu/bfloat16_convert.h):
// bit for bit what tg::bfloat16 does, ties to even, NaN kept quiet, subnormals kept.
#include <doctest/doctest.h>

#include <bit>
#include <cstdint>
#include <vector>

#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/random.h"

using namespace tg;

namespace {

uint16_t converted_bits(uint32_t float_bits) {
  const float value = std::bit_cast<float>(float_bits);
  bfloat16 out;
  cpu::float_to_bfloat16_rows(1, 1, &value, 1, &out, 1);
  return out.bits;
}

}  // namespace

TEST_CASE("float_to_bfloat16_rows: ties to even, NaN, infinity, zeros and subnormals, bit by bit") {
  struct Case {
    uint32_t float_bits;
    uint16_t expected;
    const char* what;
  };
  const Case cases[] = {
      {0x3f800000u, 0x3f80, "1.0 exactly"},
      {0x3f808000u, 0x3f80, "a tie below an even bfloat16: down"},
      {0x3f818000u, 0x3f82, "a tie below an odd bfloat16: up to even"},
      {0x3f808001u, 0x3f81, "just above a tie: up"},
      {0x3f817fffu, 0x3f81, "just below a tie: down"},
      {0xbf818000u, 0xbf82, "a negative tie: away from zero to even"},
      {0x7f7fffffu, 0x7f80, "the largest float rounds up to infinity"},
      {0x7f800000u, 0x7f80, "infinity"},
      {0xff800000u, 0xff80, "minus infinity"},
      {0x7fc00000u, 0x7fc0, "a quiet NaN"},
      {0x7f800001u, 0x7fc0, "a signalling NaN whose payload is all in the low half: still NaN, quiet"},
      {0xffc00001u, 0xffc0, "a negative NaN"},
      {0x80000000u, 0x8000, "minus zero"},
      {0x00000001u, 0x0000, "the smallest subnormal rounds to zero"},
      {0x00418000u, 0x0042, "a subnormal tie (VCVTNE2PS2BF16 would flush it to zero)"},
      {0x007fffffu, 0x0080, "the largest subnormal rounds up to the smallest normal"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    CHECK(converted_bits(c.float_bits) == c.expected);
    CHECK(bfloat16(std::bit_cast<float>(c.float_bits)).bits == c.expected);
  }
}

TEST_CASE(
    "bfloat16_to_float_rows is exact, and float_to_bfloat16_rows takes every value back, for all 65536 patterns") {
  std::vector<bfloat16> all(65536);
  for (uint32_t bits = 0; bits < 65536; ++bits) all[bits] = bfloat16::from_bits(static_cast<uint16_t>(bits));
  std::vector<float> widened(65536);
  cpu::bfloat16_to_float_rows(256, 256, all.data(), 256, widened.data(), 256);
  std::vector<bfloat16> back(65536);
  cpu::float_to_bfloat16_rows(256, 256, widened.data(), 256, back.data(), 256);
  int64_t wrong_widened = 0, wrong_back = 0;
  for (uint32_t bits = 0; bits < 65536; ++bits) {
    wrong_widened += std::bit_cast<uint32_t>(widened[bits]) != bits << 16;
    const bool nan = (bits & 0x7fffu) > 0x7f80u;
    // A NaN comes back NaN with the quiet bit set; every other value unchanged.
    wrong_back += back[bits].bits != (nan ? (bits | 0x0040u) : bits);
  }
  CHECK(wrong_widened == 0);
  CHECK(wrong_back == 0);
}

TEST_CASE("float_to_bfloat16_rows and bfloat16_to_float_rows: row strides, padding left alone, many threads") {
  const int64_t rows = 8100, cols = 130, src_stride = 133, dst_stride = 137;  // 1053000 elements: parallel
  Generator generator(3);
  std::vector<float> floats(rows * src_stride);
  for (float& value : floats) value = static_cast<float>(generator.next_uniform() * 2e4 - 1e4);
  std::vector<bfloat16> narrowed(rows * dst_stride, bfloat16::from_bits(0xabcd));
  cpu::float_to_bfloat16_rows(rows, cols, floats.data(), src_stride, narrowed.data(), dst_stride);
  std::vector<float> widened(rows * src_stride, -3.0f);
  cpu::bfloat16_to_float_rows(rows, cols, narrowed.data(), dst_stride, widened.data(), src_stride);
  int64_t wrong = 0;
  for (int64_t row = 0; row < rows; ++row) {
    for (int64_t col = 0; col < cols; ++col) {
      wrong += narrowed[row * dst_stride + col].bits != bfloat16(floats[row * src_stride + col]).bits;
      wrong += widened[row * src_stride + col] != float(bfloat16(floats[row * src_stride + col]));
    }
    for (int64_t col = cols; col < dst_stride; ++col) wrong += narrowed[row * dst_stride + col].bits != 0xabcd;
    for (int64_t col = cols; col < src_stride; ++col) wrong += widened[row * src_stride + col] != -3.0f;
  }
  CHECK(wrong == 0);
}
