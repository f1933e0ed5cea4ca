// UTF-8, one character at a time, without giving up on bad bytes.
//
// The tokenizers take arbitrary bytes. Where the bytes are valid UTF-8 they are
// read as Unicode code points; where they are not, each offending byte is
// reported as an invalid "character" of length 1, so callers can decide what
// that means (byte-level BPE treats it as a symbol, the char-level tokenizer
// rejects it) and nothing is ever skipped.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace tg::tokenizer {

struct Utf8Char {
  char32_t code_point;  // the decoded code point; the raw byte value when !valid
  std::size_t length;   // bytes consumed: 1..4 when valid, 1 when not
  bool valid;           // false for a stray continuation byte, a truncated or
                        // overlong sequence, a surrogate, or a value > U+10FFFF
};

// Decodes the character starting at text[offset] (offset < text.size()).
Utf8Char decode_utf8_char(std::string_view text, std::size_t offset);

// Appends the UTF-8 encoding of a code point (<= U+10FFFF, not a surrogate).
void append_utf8(std::string& out, char32_t code_point);

// "U+00E9", for error messages.
std::string code_point_label(char32_t code_point);

// "'é' (U+00E9)", or just "U+000A" for a control character: the form used to
// name a character in error messages.
std::string describe_char(char32_t code_point);

}  // namespace tg::tokenizer
