// CharTokenizer: a sorted vector of code points, searched by bisection (and a
// direct table for ASCII, which is most text).
#include "tinygpt/tokenizer/char_tokenizer.h"

#include <algorithm>

#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

std::string hex_byte(char32_t byte) {
  const char* digits = "0123456789ABCDEF";
  return std::string("0x") + digits[(byte >> 4) & 0xF] + digits[byte & 0xF];
}

// Decodes every character of `text`, or throws naming the first bad byte.
template <typename OnChar>
void for_each_char(std::string_view text, const char* what, const OnChar& on_char) {
  std::size_t index = 0;
  for (std::size_t offset = 0; offset < text.size(); ++index) {
    const Utf8Char c = decode_utf8_char(text, offset);
    if (!c.valid) {
      throw EncodeError(std::string(what) + " is not valid UTF-8: byte " + hex_byte(c.code_point) +
                        " at byte offset " + std::to_string(offset));
    }
    on_char(c.code_point, offset, index);
    offset += c.length;
  }
}

}  // namespace

CharTokenizer::CharTokenizer(std::vector<char32_t> characters) : characters_(std::move(characters)) {
  if (characters_.empty()) throw TokenizerError("a char-level vocabulary needs at least one character");
  std::sort(characters_.begin(), characters_.end());
  characters_.erase(std::unique(characters_.begin(), characters_.end()), characters_.end());
  for (char32_t c : characters_) {
    if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
      throw TokenizerError(code_point_label(c) + " is not a Unicode scalar value");
    }
  }
  ascii_ids_.fill(no_token);
  for (TokenId id = 0; id < characters_.size() && characters_[id] < 128; ++id) ascii_ids_[characters_[id]] = id;
}

CharTokenizer CharTokenizer::from_corpus(std::string_view corpus) {
  if (corpus.empty()) throw EncodeError("cannot build a char-level vocabulary from an empty corpus");
  std::array<bool, 128> ascii_seen{};
  std::vector<char32_t> others;
  for_each_char(corpus, "the corpus", [&](char32_t c, std::size_t, std::size_t) {
    if (c < 128) {
      ascii_seen[c] = true;
    } else {
      others.push_back(c);
    }
  });
  for (char32_t c = 0; c < 128; ++c) {
    if (ascii_seen[c]) others.push_back(c);
  }
  return CharTokenizer(std::move(others));
}

std::optional<TokenId> CharTokenizer::id_of(char32_t character) const {
  if (character < 128) {
    const TokenId id = ascii_ids_[character];
    return id == no_token ? std::nullopt : std::optional<TokenId>(id);
  }
  const auto found = std::lower_bound(characters_.begin(), characters_.end(), character);
  if (found == characters_.end() || *found != character) return std::nullopt;
  return static_cast<TokenId>(found - characters_.begin());
}

std::vector<TokenId> CharTokenizer::encode_with(std::string_view text, std::optional<TokenId> fallback_id) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size());
  for_each_char(text, "the text", [&](char32_t c, std::size_t offset, std::size_t index) {
    std::optional<TokenId> id = id_of(c);
    if (!id) id = fallback_id;
    if (!id) {
      throw EncodeError("character " + describe_char(c) + " at character " + std::to_string(index) +
                        " (byte offset " + std::to_string(offset) + ") is not in the vocabulary of " +
                        std::to_string(characters_.size()) + " characters");
    }
    ids.push_back(*id);
  });
  return ids;
}

std::vector<TokenId> CharTokenizer::encode(std::string_view text) const { return encode_with(text, std::nullopt); }

std::vector<TokenId> CharTokenizer::encode(std::string_view text, char32_t fallback) const {
  const std::optional<TokenId> fallback_id = id_of(fallback);
  if (!fallback_id) {
    throw EncodeError("the fallback character " + describe_char(fallback) + " is not in the vocabulary");
  }
  return encode_with(text, fallback_id);
}

std::string CharTokenizer::decode(std::span<const TokenId> ids) const {
  std::string text;
  text.reserve(ids.size());
  for (std::size_t position = 0; position < ids.size(); ++position) {
    if (ids[position] >= characters_.size()) {
      throw DecodeError("cannot decode id " + std::to_string(ids[position]) + " at position " +
                        std::to_string(position) + ": the vocabulary has ids 0.." +
                        std::to_string(characters_.size() - 1));
    }
    append_utf8(text, characters_[ids[position]]);
  }
  return text;
}

std::string CharTokenizer::serialize() const {
  std::string serialized;
  for (char32_t c : characters_) append_utf8(serialized, c);
  return serialized;
}

CharTokenizer CharTokenizer::deserialize(std::string_view serialized) {
  if (serialized.empty()) throw TokenizerError("a serialized char-level vocabulary cannot be empty");
  std::vector<char32_t> characters;
  try {
    for_each_char(serialized, "the serialized vocabulary", [&](char32_t c, std::size_t, std::size_t index) {
      if (!characters.empty() && c <= characters.back()) {
        throw TokenizerError("the serialized vocabulary is not sorted: character " + std::to_string(index) + ", " +
                             describe_char(c) + ", does not come after " + describe_char(characters.back()));
      }
      characters.push_back(c);
    });
  } catch (const EncodeError& error) {
    throw TokenizerError(error.what());  // a corrupt checkpoint, not a bad input text
  }
  return CharTokenizer(std::move(characters));
}

}  // namespace tg::tokenizer
