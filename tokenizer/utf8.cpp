// UTF-8 decoding and encoding by the rules of RFC 3629 / Unicode chapter 3:
// the shortest form only, no surrogates, nothing above U+10FFFF.
#include "tinygpt/tokenizer/utf8.h"

#include <cstdio>

namespace tg::tokenizer {

namespace {

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

Utf8Char invalid_byte(unsigned char byte) { return {byte, 1, false}; }

}  // namespace

Utf8Char decode_utf8_char(std::string_view text, std::size_t offset) {
  const auto* bytes = reinterpret_cast<const unsigned char*>(text.data()) + offset;
  const std::size_t available = text.size() - offset;
  const unsigned char lead = bytes[0];
  if (lead < 0x80) return {lead, 1, true};

  // The lead byte fixes the length and the smallest code point that may use
  // that length (anything below it is an overlong, forbidden encoding).
  std::size_t length;
  char32_t code_point;
  char32_t smallest;
  if ((lead & 0xE0) == 0xC0) {
    length = 2, code_point = lead & 0x1F, smallest = 0x80;
  } else if ((lead & 0xF0) == 0xE0) {
    length = 3, code_point = lead & 0x0F, smallest = 0x800;
  } else if ((lead & 0xF8) == 0xF0) {
    length = 4, code_point = lead & 0x07, smallest = 0x10000;
  } else {
    return invalid_byte(lead);  // a continuation byte, or 0xF8..0xFF
  }
  if (available < length) return invalid_byte(lead);
  for (std::size_t i = 1; i < length; ++i) {
    if (!is_continuation(bytes[i])) return invalid_byte(lead);
    code_point = (code_point << 6) | (bytes[i] & 0x3F);
  }
  const bool surrogate = code_point >= 0xD800 && code_point <= 0xDFFF;
  if (code_point < smallest || surrogate || code_point > 0x10FFFF) return invalid_byte(lead);
  return {code_point, length, true};
}

void append_utf8(std::string& out, char32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xC0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else if (code_point < 0x10000) {
    out += static_cast<char>(0xE0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code_point >> 18));
    out += static_cast<char>(0x80 | ((code_point >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code_point & 0x3F));
  }
}

std::string code_point_label(char32_t code_point) {
  char label[16];
  std::snprintf(label, sizeof label, "U+%04X", static_cast<unsigned>(code_point));
  return label;
}

std::string describe_char(char32_t code_point) {
  // Control characters, and the byte-order-mark-like invisible ones, would
  // print as nothing or garble the terminal: name those by code point only.
  const bool printable = code_point >= 0x20 && code_point != 0x7F &&
                         !(code_point >= 0x80 && code_point < 0xA0) && code_point <= 0x10FFFF &&
                         !(code_point >= 0xD800 && code_point <= 0xDFFF);
  if (!printable) return code_point_label(code_point);
  std::string text = "'";
  append_utf8(text, code_point);
  return text + "' (" + code_point_label(code_point) + ")";
}

}  // namespace tg::tokenizer
