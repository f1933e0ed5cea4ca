// The char-level tokenizer: one token per Unicode character.
//
// The vocabulary is the set of distinct characters (code points) of a corpus,
// sorted by code point, so id i is the i-th smallest character: for tiny
// Shakespeare, "\n" is 0 and " " is 1. UTF-8 text is read character by
// character, not byte by byte, so "é" is one token.
//
// A character outside the vocabulary is an EncodeError naming the character
// and its position, unless the caller names a fallback character (itself in
// the vocabulary) to use instead. Nothing is ever silently given a wrong id.
#pragma once

#include <array>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/token_id.h"

namespace tg::tokenizer {

class CharTokenizer {
 public:
  // The distinct characters of `corpus`. Throws EncodeError if it is not
  // valid UTF-8 (naming the byte offset) or is empty.
  static CharTokenizer from_corpus(std::string_view corpus);

  // From a list of characters, in any order, duplicates allowed.
  explicit CharTokenizer(std::vector<char32_t> characters);

  // Throws EncodeError for a character outside the vocabulary or invalid UTF-8.
  std::vector<TokenId> encode(std::string_view text) const;

  // Characters outside the vocabulary become `fallback`'s id. Throws
  // EncodeError if `fallback` is itself not in the vocabulary.
  std::vector<TokenId> encode(std::string_view text, char32_t fallback) const;

  // Throws DecodeError naming the first id out of range and its position.
  std::string decode(std::span<const TokenId> ids) const;

  std::optional<TokenId> id_of(char32_t character) const;
  std::size_t vocab_size() const { return characters_.size(); }
  const std::vector<char32_t>& characters() const { return characters_; }

  // For checkpoints: the whole vocabulary as one UTF-8 string, the characters
  // in id order (so it fits a string field such as safetensors' metadata).
  std::string serialize() const;

  // The inverse of serialize(). Throws TokenizerError if the string is empty,
  // not valid UTF-8, or not strictly increasing (i.e. not written by serialize).
  static CharTokenizer deserialize(std::string_view serialized);

 private:
  std::vector<TokenId> encode_with(std::string_view text, std::optional<TokenId> fallback_id) const;

  std::vector<char32_t> characters_;  // sorted, distinct: id -> character
  std::array<TokenId, 128> ascii_ids_;  // ASCII character -> id, or no_token
};

}  // namespace tg::tokenizer
