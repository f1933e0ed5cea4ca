// CharTokenizer: a sorted vector of code points, searched by bisection (and a
// direct table for ASCII, which is most text). Special tokens are cut out of a
// text first by Hugging Face's added-token matcher (every one "special", none
// stripping whitespace or asking for a whole word).
#include "tinygpt/tokenizer/char_tokenizer.h"

#include <algorithm>
#include <unordered_set>

#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/hf_added_tokens.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

std::string hex_byte(char32_t byte) {
  const char* digits = "0123456789ABCDEF";
  return std::string("0x") + digits[(byte >> 4) & 0xF] + digits[byte & 0xF];
}

// Decodes every character of `text`, or throws naming the first bad byte. When
// `text` is a part of a longer text, starting at its character `first_index`
// and byte `first_offset`, the positions given and named count from there.
template <typename OnChar>
void for_each_char(std::string_view text, const char* what, const OnChar& on_char, std::size_t first_index = 0,
                   std::size_t first_offset = 0) {
  std::size_t index = first_index;
  for (std::size_t offset = 0; offset < text.size(); ++index) {
    const Utf8Char c = decode_utf8_char(text, offset);
    if (!c.valid) {
      throw EncodeError(std::string(what) + " is not valid UTF-8: byte " + hex_byte(c.code_point) +
                        " at byte offset " + std::to_string(first_offset + offset));
    }
    on_char(c.code_point, first_offset + offset, index);
    offset += c.length;
  }
}

// The number of characters (code points) of valid UTF-8 text.
std::size_t count_characters(std::string_view text) {
  return static_cast<std::size_t>(
      std::count_if(text.begin(), text.end(), [](char byte) { return (static_cast<unsigned char>(byte) & 0xC0) != 0x80; }));
}

// A special token as a short quoted string for an error message (its first bytes when long).
std::string quoted_token(std::string_view token) {
  constexpr std::size_t shown = 40;
  return "\"" + std::string(token.substr(0, shown)) + (token.size() > shown ? "...\"" : "\"");
}

// Throws TokenizerError naming the first special token that cannot be one (see the constructor).
void check_special_tokens(const std::vector<std::string>& tokens, const std::vector<char32_t>& characters) {
  if (tokens.size() > kMaxCharSpecialTokens) {
    throw TokenizerError("a char-level vocabulary holds at most " + std::to_string(kMaxCharSpecialTokens) +
                         " special tokens, not " + std::to_string(tokens.size()));
  }
  std::unordered_set<std::string_view> seen;
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    const std::string& token = tokens[i];
    const std::string which = "special token " + std::to_string(i);
    if (token.empty()) throw TokenizerError(which + " is empty");
    if (token.size() > kMaxCharSpecialTokenBytes) {
      throw TokenizerError(which + ", " + quoted_token(token) + ", has " + std::to_string(token.size()) +
                           " bytes; a special token has at most " + std::to_string(kMaxCharSpecialTokenBytes));
    }
    for (std::size_t offset = 0; offset < token.size();) {
      const Utf8Char c = decode_utf8_char(token, offset);
      if (!c.valid) {
        throw TokenizerError(which + " is not valid UTF-8: byte " + hex_byte(c.code_point) + " at byte offset " +
                             std::to_string(offset));
      }
      if (offset == 0 && c.length == token.size() &&
          std::binary_search(characters.begin(), characters.end(), c.code_point)) {
        throw TokenizerError(which + ", " + quoted_token(token) +
                             ", is also a character of the vocabulary: that character could never be encoded");
      }
      offset += c.length;
    }
    if (!seen.insert(token).second) throw TokenizerError(which + ", " + quoted_token(token) + ", is given twice");
  }
}

}  // namespace

CharTokenizer::CharTokenizer(std::vector<char32_t> characters, std::vector<std::string> special_tokens)
    : characters_(std::move(characters)), special_tokens_(std::move(special_tokens)) {
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
  check_special_tokens(special_tokens_, characters_);
  if (special_tokens_.empty()) return;
  std::vector<HfAddedToken> added;
  for (std::size_t i = 0; i < special_tokens_.size(); ++i) {
    added.push_back({.id = static_cast<TokenId>(characters_.size() + i), .content = special_tokens_[i], .special = true});
  }
  special_matcher_ = std::make_shared<const HfAddedTokenMatcher>(std::move(added));
}

CharTokenizer CharTokenizer::from_corpus(std::string_view corpus) { return from_text(corpus, {}); }

CharTokenizer CharTokenizer::from_text(std::string_view text, std::vector<std::string> special_tokens) {
  if (text.empty()) throw EncodeError("cannot build a char-level vocabulary from an empty corpus");
  check_special_tokens(special_tokens, {});  // before the matcher below relies on them
  std::array<bool, 128> ascii_seen{};
  std::vector<char32_t> others;
  const auto collect = [&](std::string_view piece) {
    for_each_char(piece, "the corpus", [&](char32_t c, std::size_t, std::size_t) {
      if (c < 128) {
        ascii_seen[c] = true;
      } else {
        others.push_back(c);
      }
    });
  };
  if (special_tokens.empty()) {
    collect(text);
  } else {
    std::vector<HfAddedToken> added;
    for (const std::string& token : special_tokens) added.push_back({.id = 0, .content = token, .special = true});
    std::vector<HfSegment> segments;
    HfAddedTokenMatcher(std::move(added)).split(text, segments);
    for (const HfSegment& segment : segments) {
      if (segment.token == no_token) collect(text.substr(segment.start, segment.end - segment.start));
    }
  }
  for (char32_t c = 0; c < 128; ++c) {
    if (ascii_seen[c]) others.push_back(c);
  }
  if (others.empty()) throw EncodeError("the corpus has no character outside its special tokens");
  return CharTokenizer(std::move(others), std::move(special_tokens));
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

std::optional<TokenId> CharTokenizer::special_token_id(std::string_view text) const {
  const auto found = std::find(special_tokens_.begin(), special_tokens_.end(), text);
  if (found == special_tokens_.end()) return std::nullopt;
  return static_cast<TokenId>(characters_.size() + (found - special_tokens_.begin()));
}

void CharTokenizer::encode_characters(std::string_view text, std::size_t first_index, std::size_t first_offset,
                                      std::optional<TokenId> fallback_id, std::vector<TokenId>& ids) const {
  for_each_char(
      text, "the text",
      [&](char32_t c, std::size_t offset, std::size_t index) {
        std::optional<TokenId> id = id_of(c);
        if (!id) id = fallback_id;
        if (!id) {
          throw EncodeError("character " + describe_char(c) + " at character " + std::to_string(index) +
                            " (byte offset " + std::to_string(offset) + ") is not in the vocabulary of " +
                            std::to_string(characters_.size()) + " characters");
        }
        ids.push_back(*id);
      },
      first_index, first_offset);
}

std::vector<TokenId> CharTokenizer::encode_with(std::string_view text, std::optional<TokenId> fallback_id) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size());
  if (!special_matcher_) {
    encode_characters(text, 0, 0, fallback_id, ids);
    return ids;
  }
  std::vector<HfSegment> segments;
  special_matcher_->split(text, segments);
  std::size_t index = 0;  // characters before the segment
  for (const HfSegment& segment : segments) {
    const std::string_view piece = text.substr(segment.start, segment.end - segment.start);
    if (segment.token == no_token) {
      encode_characters(piece, index, segment.start, fallback_id, ids);
    } else {
      ids.push_back(segment.token);
    }
    index += count_characters(piece);
  }
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

std::string CharTokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  std::string text;
  text.reserve(ids.size());
  for (std::size_t position = 0; position < ids.size(); ++position) {
    const TokenId id = ids[position];
    if (id >= vocab_size()) {
      throw DecodeError("cannot decode id " + std::to_string(id) + " at position " + std::to_string(position) +
                        ": the vocabulary has ids 0.." + std::to_string(vocab_size() - 1));
    }
    if (id < characters_.size()) {
      append_utf8(text, characters_[id]);
    } else if (!skip_special_tokens) {
      text += special_tokens_[id - characters_.size()];
    }
  }
  return text;
}

std::string CharTokenizer::serialize() const {
  std::string serialized;
  for (char32_t c : characters_) append_utf8(serialized, c);
  return serialized;
}

CharTokenizer CharTokenizer::deserialize(std::string_view serialized, std::vector<std::string> special_tokens) {
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
  return CharTokenizer(std::move(characters), std::move(special_tokens));
}

}  // namespace tg::tokenizer
