// The tables of GPT-2's byte alphabet, built once on first use.
#include "tinygpt/tokenizer/byte_alphabet.h"

#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

bool is_printable_byte(int byte) {
  return (byte >= '!' && byte <= '~') || (byte >= 0xA1 && byte <= 0xAC) || (byte >= 0xAE && byte <= 0xFF);
}

struct ByteAlphabet {
  std::array<char32_t, 256> char_of_byte{};
  std::array<std::uint8_t, 256> order{};
  // Every alphabet character is below U+0100 + 68, so a flat table inverts it.
  static constexpr char32_t char_limit = 0x100 + 68;
  std::array<std::int16_t, char_limit> byte_of_char{};

  ByteAlphabet() {
    byte_of_char.fill(-1);
    int next_id = 0;
    for (int byte = 0; byte < 256; ++byte) {
      if (is_printable_byte(byte)) order[next_id++] = static_cast<std::uint8_t>(byte);
    }
    char32_t next_stand_in = 0x100;
    for (int byte = 0; byte < 256; ++byte) {
      if (is_printable_byte(byte)) {
        char_of_byte[byte] = static_cast<char32_t>(byte);
      } else {
        char_of_byte[byte] = next_stand_in++;
        order[next_id++] = static_cast<std::uint8_t>(byte);
      }
      byte_of_char[char_of_byte[byte]] = static_cast<std::int16_t>(byte);
    }
  }
};

const ByteAlphabet& alphabet() {
  static const ByteAlphabet instance;
  return instance;
}

}  // namespace

char32_t byte_to_alphabet_char(std::uint8_t byte) { return alphabet().char_of_byte[byte]; }

std::optional<std::uint8_t> alphabet_char_to_byte(char32_t code_point) {
  if (code_point >= ByteAlphabet::char_limit) return std::nullopt;
  const std::int16_t byte = alphabet().byte_of_char[code_point];
  if (byte < 0) return std::nullopt;
  return static_cast<std::uint8_t>(byte);
}

std::string bytes_to_alphabet_text(std::string_view bytes) {
  std::string text;
  text.reserve(bytes.size() * 2);
  for (char byte : bytes) append_utf8(text, byte_to_alphabet_char(static_cast<std::uint8_t>(byte)));
  return text;
}

std::optional<std::string> alphabet_text_to_bytes(std::string_view text) {
  std::string bytes;
  bytes.reserve(text.size());
  for (std::size_t offset = 0; offset < text.size();) {
    const Utf8Char c = decode_utf8_char(text, offset);
    if (!c.valid) return std::nullopt;
    const std::optional<std::uint8_t> byte = alphabet_char_to_byte(c.code_point);
    if (!byte) return std::nullopt;
    bytes += static_cast<char>(*byte);
    offset += c.length;
  }
  return bytes;
}

const std::array<std::uint8_t, 256>& byte_order() { return alphabet().order; }

}  // namespace tg::tokenizer
