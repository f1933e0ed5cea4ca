// The four classes of character that GPT-2's pre-tokenisation pattern tells
// apart:
//
//   'letter'      \p{L}   Unicode general category L* (Lu Ll Lt Lm Lo)
//   'number'      \p{N}   Unicode general category N* (Nd Nl No)
//   'whitespace'  \s      the Unicode White_Space property
//   'other'       everything else, and every byte that is not valid UTF-8
//
// The categories are Unicode 16.0's, the version of the tables in tiktoken's
// regex engine, from a table generated from Unicode data
// (unicode_ranges.inc, by generate_unicode_ranges.cjs). White_Space is spelled
// out in char_class.cpp: it is what \s means in that engine. Note what it
// leaves out: U+200B ZERO WIDTH SPACE and U+001C..U+001F are 'other',
// although Python's str.isspace() says otherwise.
#pragma once

#include <array>
#include <cstdint>

namespace tg::tokenizer {

enum class CharClass : std::uint8_t { letter, number, whitespace, other };

namespace detail {

constexpr std::array<CharClass, 128> make_ascii_classes() {
  std::array<CharClass, 128> classes{};
  for (int c = 0; c < 128; ++c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')) {
      classes[c] = CharClass::letter;
    } else if (c >= '0' && c <= '9') {
      classes[c] = CharClass::number;
    } else if ((c >= '\t' && c <= '\r') || c == ' ') {
      classes[c] = CharClass::whitespace;  // \t \n \v \f \r and space
    } else {
      classes[c] = CharClass::other;
    }
  }
  return classes;
}

// ASCII is most text: its classes are a table the compiler can inline.
inline constexpr std::array<CharClass, 128> ascii_classes = make_ascii_classes();

CharClass classify_beyond_ascii(char32_t code_point);

}  // namespace detail

// The class of one code point (anything above U+10FFFF is 'other').
inline CharClass classify_code_point(char32_t code_point) {
  return code_point < 128 ? detail::ascii_classes[code_point] : detail::classify_beyond_ascii(code_point);
}

// True for the code points with the Unicode White_Space property.
bool is_unicode_whitespace(char32_t code_point);

// The Unicode version of the letter and number tables: "16.0".
const char* unicode_version();

}  // namespace tg::tokenizer
