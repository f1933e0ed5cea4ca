// Python's case mapping and whitespace, for the scripts chat messages most
// often use: ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic. Other
// characters keep their case (Python would map, say, Armenian too); the final
// sigma rule of Greek lower-casing and ligatures other than ß are not applied.
#include <string>

#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer::jinja {

namespace {

std::u32string decode(const std::string& text) {
  std::u32string out;
  for (std::size_t i = 0; i < text.size();) {
    const Utf8Char ch = decode_utf8_char(text, i);
    out += ch.code_point;
    i += ch.length;
  }
  return out;
}

std::string encode(const std::u32string& text) {
  std::string out;
  for (const char32_t c : text) append_utf8(out, c);
  return out;
}

// The upper-case partner of a lower-case letter, or the letter itself.
char32_t to_upper(char32_t c) {
  if (c >= 'a' && c <= 'z') return c - 32;
  if (c < 0x80) return c;
  if (c == 0xB5) return 0x39C;  // micro sign -> Greek capital mu
  if ((c >= 0xE0 && c <= 0xFE && c != 0xF7)) return c - 32;
  if (c == 0xFF) return 0x178;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x131) return 'I';
    if (c == 0x17F) return 'S';
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 0) ? c - 1 : c;
    if (c == 0x138 || c == 0x149 || c == 0x130) return c;
    return (c % 2 == 1) ? c - 1 : c;
  }
  if (c >= 0x3B1 && c <= 0x3C9 && c != 0x3C2) return c - 32;
  if (c == 0x3C2) return 0x3A3;
  if (c >= 0x430 && c <= 0x44F) return c - 32;
  if (c >= 0x450 && c <= 0x45F) return c - 80;
  return c;
}

char32_t to_lower(char32_t c) {
  if (c >= 'A' && c <= 'Z') return c + 32;
  if (c < 0x80) return c;
  if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
  if (c == 0x178) return 0xFF;
  if (c >= 0x100 && c <= 0x17F) {
    if (c == 0x130) return 'i';  // append_lower adds the combining dot Python adds
    if ((c >= 0x139 && c <= 0x148) || (c >= 0x179 && c <= 0x17E)) return (c % 2 == 1) ? c + 1 : c;
    if (c == 0x138 || c == 0x149 || c == 0x131 || c == 0x17F) return c;
    return (c % 2 == 0) ? c + 1 : c;
  }
  if (c >= 0x391 && c <= 0x3A9 && c != 0x3A2) return c + 32;
  if (c >= 0x410 && c <= 0x42F) return c + 32;
  if (c >= 0x400 && c <= 0x40F) return c + 80;
  return c;
}

bool is_cased(char32_t c) { return to_upper(c) != c || to_lower(c) != c || c == 0xDF; }

void append_upper(std::u32string& out, char32_t c) {
  if (c == 0xDF) out += U"SS";  // ß
  else out += to_upper(c);
}

void append_lower(std::u32string& out, char32_t c) {
  if (c == 0x130) out += U"i\u0307";  // İ lower-cases to i and a combining dot above
  else out += to_lower(c);
}

}  // namespace

std::string upper_case(const std::string& text) {
  std::u32string out;
  for (const char32_t c : decode(text)) append_upper(out, c);
  return encode(out);
}

std::string lower_case(const std::string& text) {
  std::u32string out;
  for (const char32_t c : decode(text)) append_lower(out, c);
  return encode(out);
}

// Python's str.title(): a cased character after an uncased one is
// upper-cased (title-cased), every other one lower-cased. "they're" -> "They'Re".
std::string title_case(const std::string& text) {
  std::u32string out;
  bool previous_cased = false;
  for (const char32_t c : decode(text)) {
    if (previous_cased) append_lower(out, c);
    else if (c == 0xDF) out += U"Ss";
    else out += to_upper(c);
    previous_cased = is_cased(c);
  }
  return encode(out);
}

// Python's str.capitalize(): the first character title-cased, the rest lower.
std::string capitalized(const std::string& text) {
  const std::u32string chars = decode(text);
  std::u32string out;
  for (std::size_t i = 0; i < chars.size(); ++i) {
    if (i == 0) {
      if (chars[0] == 0xDF) out += U"Ss";
      else out += to_upper(chars[0]);
    } else {
      append_lower(out, chars[i]);
    }
  }
  return encode(out);
}

bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 || c == 0x1680 ||
         (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
}

std::string strip(const std::string& text, const std::string* chars, bool left, bool right) {
  const std::u32string decoded = decode(text);
  const std::u32string set = chars ? decode(*chars) : std::u32string();
  auto strips = [&](char32_t c) { return chars ? set.find(c) != std::u32string::npos : is_python_space(c); };
  std::size_t begin = 0;
  std::size_t end = decoded.size();
  if (left)
    while (begin < end && strips(decoded[begin])) ++begin;
  if (right)
    while (end > begin && strips(decoded[end - 1])) --end;
  return encode(decoded.substr(begin, end - begin));
}

}  // namespace tg::tokenizer::jinja
