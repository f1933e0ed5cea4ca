// GPT-2's byte alphabet: how byte-level BPE writes bytes as printable text.
//
// encoder.json and vocab.bpe store tokens as text, but a token is a byte
// string. GPT-2 maps each of the 256 bytes to one printable Unicode character:
// the 188 bytes that are already printable and not a space ('!'..'~',
// '¡'..'¬', '®'..'ÿ') map to the character with the same code point; the other
// 68 (controls, space, DEL, NBSP, soft hyphen, ...) map, in byte order, to
// U+0100, U+0101, ... So a space is 'Ġ' (U+0120), a newline 'Ċ' (U+010A).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace tg::tokenizer {

// The character that stands for a byte.
char32_t byte_to_alphabet_char(std::uint8_t byte);

// The byte a character stands for, or nothing if it is not in the alphabet.
std::optional<std::uint8_t> alphabet_char_to_byte(char32_t code_point);

// Bytes written in the alphabet (UTF-8 encoded): " world" -> "Ġworld".
std::string bytes_to_alphabet_text(std::string_view bytes);

// The inverse; nothing if the text has a character outside the alphabet (or is
// not valid UTF-8).
std::optional<std::string> alphabet_text_to_bytes(std::string_view text);

// The 256 bytes in GPT-2's order of token ids: the printable ones first, then
// the others. encoder.json gives byte_order()[i] the id i.
const std::array<std::uint8_t, 256>& byte_order();

}  // namespace tg::tokenizer
