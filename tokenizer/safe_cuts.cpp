// The two cut rules of safe_cuts.h. Characters are decoded as the GPT-2 scanner
// decodes them (utf8.h, char_class.h), so "whitespace" means the same here as there.
#include "tinygpt/tokenizer/safe_cuts.h"

#include "tinygpt/tokenizer/char_class.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

bool is_continuation_byte(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// Whether a valid whitespace character starts at text[position].
bool whitespace_starts_at(std::string_view text, std::size_t position) {
  const auto byte = static_cast<unsigned char>(text[position]);
  if (byte < 0x80) return classify_code_point(byte) == CharClass::whitespace;
  const Utf8Char c = decode_utf8_char(text, position);
  return c.valid && classify_code_point(c.code_point) == CharClass::whitespace;
}

// Whether a valid whitespace character ends just before text[end]. Any other
// bytes there are either a character that is not whitespace or bytes the
// scanner reads as 'other' symbols (stray continuation bytes, a broken sequence).
bool whitespace_ends_at(std::string_view text, std::size_t end) {
  const auto last = static_cast<unsigned char>(text[end - 1]);
  if (last < 0x80) return classify_code_point(last) == CharClass::whitespace;
  // Step back over continuation bytes to the byte that starts the character (at most 4 bytes long).
  std::size_t start = end - 1;
  while (start > 0 && end - start < 4 && is_continuation_byte(text[start])) --start;
  const Utf8Char c = decode_utf8_char(text, start);
  return c.valid && start + c.length == end && classify_code_point(c.code_point) == CharClass::whitespace;
}

}  // namespace

std::size_t next_character_cut(std::string_view text, std::size_t from) {
  for (std::size_t position = from > 0 ? from : 1; position < text.size(); ++position) {
    if (!is_continuation_byte(text[position])) return position;
  }
  return std::string_view::npos;
}

std::size_t next_gpt2_cut(std::string_view text, std::size_t from) {
  for (std::size_t position = from > 0 ? from : 1; position < text.size(); ++position) {
    if (whitespace_starts_at(text, position) && !whitespace_ends_at(text, position)) return position;
  }
  return std::string_view::npos;
}

}  // namespace tg::tokenizer
