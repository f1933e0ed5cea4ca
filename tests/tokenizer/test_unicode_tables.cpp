// The generated letter/number table (tokenizer/unicode_ranges.inc, Unicode
// 16.0) checked against an independent source: utf8proc, Debian's Unicode
// library (Unicode 15.0). They must agree on every character utf8proc knows;
// the characters Unicode 15.1 and 16.0 added are checked by example, and all
// of them against tiktoken by the reference fixture.
#include <doctest/doctest.h>

#include <utf8proc.h>

#include <optional>
#include <string>

#include "tinygpt/tokenizer/char_class.h"

using namespace tg::tokenizer;

namespace {

// What utf8proc says, in our four classes, or nothing for an unassigned code
// point (which a later Unicode version may have assigned).
std::optional<CharClass> utf8proc_class(char32_t code_point) {
  if (is_unicode_whitespace(code_point)) return CharClass::whitespace;
  switch (utf8proc_category(static_cast<utf8proc_int32_t>(code_point))) {
    case UTF8PROC_CATEGORY_CN:
      return std::nullopt;
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
      return CharClass::letter;
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
      return CharClass::number;
    default:
      return CharClass::other;
  }
}

}  // namespace

TEST_CASE("the generated table agrees with utf8proc on every character utf8proc knows") {
  std::size_t compared = 0, disagreements = 0;
  for (char32_t code_point = 0; code_point < 0x110000; ++code_point) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    const std::optional<CharClass> expected = utf8proc_class(code_point);
    if (!expected) continue;
    ++compared;
    if (classify_code_point(code_point) != *expected) {
      ++disagreements;
      CAPTURE(code_point);
      CHECK(static_cast<int>(classify_code_point(code_point)) == static_cast<int>(*expected));
    }
  }
  MESSAGE("compared " << compared << " characters with utf8proc " << std::string(utf8proc_version())
                      << " (Unicode " << std::string(utf8proc_unicode_version()) << ")");
  CHECK(compared > 280000);
  CHECK(disagreements == 0);
}

TEST_CASE("letters and numbers new in Unicode 15.1 and 16.0 are classified; 17.0's are not yet") {
  CHECK(classify_code_point(0x2EBF0) == CharClass::letter);  // CJK Extension I (15.1)
  CHECK(classify_code_point(0x13460) == CharClass::letter);  // Egyptian Hieroglyphs Extended-A (16.0)
  CHECK(classify_code_point(0x1C89) == CharClass::letter);   // Cyrillic TJE (16.0)
  CHECK(classify_code_point(0x16130) == CharClass::number);  // Gurung Khema digit zero (16.0)
  CHECK(classify_code_point(0x323B0) == CharClass::other);   // CJK Extension J (17.0): tiktoken sees a symbol
  CHECK(classify_code_point(0x10FFFF) == CharClass::other);
  CHECK(classify_code_point(0x110000) == CharClass::other);
  CHECK(std::string(unicode_version()) == "16.0");
}
