// UTF-8 decoding, character classes and GPT-2's byte alphabet: the small
// pieces everything else stands on.
#include <doctest/doctest.h>

#include <set>

#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/char_class.h"
#include "tinygpt/tokenizer/utf8.h"

using namespace tg::tokenizer;

TEST_CASE("decode_utf8_char reads 1- to 4-byte characters") {
  const std::string text = "a\xC3\xA9\xE4\xB8\xAD\xF0\x9F\x91\x8D";  // a é 中 👍
  Utf8Char c = decode_utf8_char(text, 0);
  CHECK(c.valid);
  CHECK(c.code_point == U'a');
  CHECK(c.length == 1);
  c = decode_utf8_char(text, 1);
  CHECK(c.code_point == 0xE9);
  CHECK(c.length == 2);
  c = decode_utf8_char(text, 3);
  CHECK(c.code_point == 0x4E2D);
  CHECK(c.length == 3);
  c = decode_utf8_char(text, 6);
  CHECK(c.code_point == 0x1F44D);
  CHECK(c.length == 4);
}

TEST_CASE("decode_utf8_char rejects malformed sequences one byte at a time") {
  const char* bad[] = {
      "\x80",              // a stray continuation byte
      "\xC3",              // truncated 2-byte sequence
      "\xC3(",             // lead byte followed by a non-continuation
      "\xC0\xAF",          // overlong '/'
      "\xE0\x80\xAF",      // overlong '/'
      "\xED\xA0\x80",      // a UTF-16 surrogate (U+D800)
      "\xF4\x90\x80\x80",  // U+110000, beyond Unicode
      "\xFF",              // never valid
  };
  for (const char* bytes : bad) {
    const Utf8Char c = decode_utf8_char(bytes, 0);
    CHECK_FALSE(c.valid);
    CHECK(c.length == 1);
    CHECK(c.code_point == static_cast<unsigned char>(bytes[0]));
  }
}

TEST_CASE("append_utf8 inverts decode_utf8_char over the whole code space") {
  for (char32_t code_point = 0; code_point <= 0x10FFFF; code_point += (code_point < 0x3000 ? 1 : 97)) {
    if (code_point >= 0xD800 && code_point <= 0xDFFF) continue;
    std::string bytes;
    append_utf8(bytes, code_point);
    const Utf8Char c = decode_utf8_char(bytes, 0);
    REQUIRE(c.valid);
    CHECK(c.code_point == code_point);
    CHECK(c.length == bytes.size());
  }
}

TEST_CASE("describe_char names printable characters and hides control ones") {
  CHECK(describe_char(0xE9) == "'\xC3\xA9' (U+00E9)");
  CHECK(describe_char(U'\n') == "U+000A");
  CHECK(describe_char(0x85) == "U+0085");
}

TEST_CASE("character classes follow Unicode categories and White_Space") {
  CHECK(classify_code_point(U'a') == CharClass::letter);
  CHECK(classify_code_point(0xE9) == CharClass::letter);     // é
  CHECK(classify_code_point(0x4E2D) == CharClass::letter);   // 中 (Lo)
  CHECK(classify_code_point(0x1D518) == CharClass::letter);  // 𝔘, beyond the BMP
  CHECK(classify_code_point(0x02B0) == CharClass::letter);   // ʰ (Lm)
  CHECK(classify_code_point(U'7') == CharClass::number);
  CHECK(classify_code_point(0x0663) == CharClass::number);   // Arabic-Indic three (Nd)
  CHECK(classify_code_point(0x216B) == CharClass::number);   // Ⅻ (Nl)
  CHECK(classify_code_point(0xBD) == CharClass::number);     // ½ (No)
  CHECK(classify_code_point(0x0301) == CharClass::other);    // combining acute (Mn)
  CHECK(classify_code_point(0x1F44D) == CharClass::other);   // 👍 (So)
  CHECK(classify_code_point(0x200D) == CharClass::other);    // zero width joiner (Cf)
  CHECK(classify_code_point(U'\'') == CharClass::other);
  for (char32_t space : {0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000, 0x200A, 0x2028, 0x2029,
                         0x202F, 0x205F, 0x3000}) {
    CAPTURE(space);
    CHECK(classify_code_point(space) == CharClass::whitespace);
  }
  // Not White_Space, though some regex flavours or str.isspace() say so.
  for (char32_t not_space : {0x1C, 0x1D, 0x1E, 0x1F, 0x200B, 0x180E, 0xFEFF}) {
    CAPTURE(not_space);
    CHECK(classify_code_point(not_space) == CharClass::other);
  }
}

TEST_CASE("the byte alphabet maps 256 bytes to 256 distinct printable characters") {
  std::set<char32_t> seen;
  for (int byte = 0; byte < 256; ++byte) {
    const char32_t c = byte_to_alphabet_char(static_cast<std::uint8_t>(byte));
    seen.insert(c);
    CHECK(alphabet_char_to_byte(c) == byte);
  }
  CHECK(seen.size() == 256);
  CHECK(byte_to_alphabet_char(' ') == 0x120);   // Ġ
  CHECK(byte_to_alphabet_char('\n') == 0x10A);  // Ċ
  CHECK(byte_to_alphabet_char('A') == U'A');
  CHECK(byte_to_alphabet_char(0xAD) == 0x143);  // soft hyphen, the last stand-in
  CHECK_FALSE(alphabet_char_to_byte(U' ').has_value());
  CHECK_FALSE(alphabet_char_to_byte(0x144).has_value());
  CHECK(byte_order()[0] == '!');
  CHECK(byte_order()[187] == 0xFF);
  CHECK(byte_order()[188] == 0x00);
}

TEST_CASE("alphabet text converts both ways and rejects foreign characters") {
  CHECK(bytes_to_alphabet_text(" world\n") == "\xC4\xA0world\xC4\x8A");
  CHECK(alphabet_text_to_bytes("\xC4\xA0world\xC4\x8A") == std::optional<std::string>(" world\n"));
  std::string all_bytes;
  for (int byte = 0; byte < 256; ++byte) all_bytes += static_cast<char>(byte);
  CHECK(alphabet_text_to_bytes(bytes_to_alphabet_text(all_bytes)) == std::optional<std::string>(all_bytes));
  CHECK_FALSE(alphabet_text_to_bytes("a b").has_value());        // a raw space is not in the alphabet
  CHECK_FALSE(alphabet_text_to_bytes("\xE4\xB8\xAD").has_value());  // 中
  CHECK_FALSE(alphabet_text_to_bytes("\xC3").has_value());          // invalid UTF-8
}
