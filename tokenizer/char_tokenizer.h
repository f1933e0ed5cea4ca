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
//
// Special tokens. A chat model's template writes markers such as ChatML's
// "<|im_start|>" and "<|im_end|>"; spelled out character by character they
// would cost ten positions each and no single id could stop generation. So a
// vocabulary may also hold a list of special tokens, whole strings with one id
// each, after the characters: with n characters, the i-th special token is id
// n + i. encode() finds them in a text first, leftmost and longest first
// ("<|im_start|>" over a token "<|im"), as Hugging Face's added tokens are
// found (hf_added_tokens.h), and reads the text between them character by
// character; a text that holds none encodes exactly as without them.
//
//   CharTokenizer::from_text("<|im_start|>user\nhi<|im_end|>", {"<|im_start|>", "<|im_end|>"})
//     characters "\n", "e", "h", "i", "r", "s", "u" (ids 0..6; no '<' or '|': they occur
//     only inside the special tokens), then "<|im_start|>" 7 and "<|im_end|>" 8
#pragma once

#include <array>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/token_id.h"

namespace tg::tokenizer {

class HfAddedTokenMatcher;

// At most this many special tokens, each at most this many bytes: a checkpoint
// is read from a file a stranger may have written.
inline constexpr std::size_t kMaxCharSpecialTokens = 1024;
inline constexpr std::size_t kMaxCharSpecialTokenBytes = 256;

class CharTokenizer {
 public:
  // The distinct characters of `corpus`. Throws EncodeError if it is not
  // valid UTF-8 (naming the byte offset) or is empty.
  static CharTokenizer from_corpus(std::string_view corpus);

  // The vocabulary of a text written with special tokens (a chat corpus): the
  // distinct characters of `text` once every special token in it is taken out
  // (so '<' and '|' are in the vocabulary only when they occur elsewhere), then
  // `special_tokens` in the order given. from_text(corpus, {}) is from_corpus.
  // Throws EncodeError when the text is not valid UTF-8 or has no character
  // outside its special tokens, TokenizerError when the special tokens are not
  // valid (see the constructor).
  static CharTokenizer from_text(std::string_view text, std::vector<std::string> special_tokens);

  // From a list of characters, in any order, duplicates allowed, and the
  // special tokens, in id order. Throws TokenizerError when a special token is
  // empty, longer than kMaxCharSpecialTokenBytes, not valid UTF-8, given twice,
  // a single character that is also in the vocabulary (it would hide that
  // character's id), or when there are more than kMaxCharSpecialTokens.
  explicit CharTokenizer(std::vector<char32_t> characters, std::vector<std::string> special_tokens = {});

  // Throws EncodeError for a character outside the vocabulary or invalid UTF-8.
  std::vector<TokenId> encode(std::string_view text) const;

  // Characters outside the vocabulary become `fallback`'s id. Throws
  // EncodeError if `fallback` is itself not in the vocabulary.
  std::vector<TokenId> encode(std::string_view text, char32_t fallback) const;

  // Throws DecodeError naming the first id out of range and its position.
  // skip_special_tokens leaves the special tokens out of the text.
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;

  std::optional<TokenId> id_of(char32_t character) const;
  // The id of the special token spelled `text` ("<|im_end|>"), or nothing.
  std::optional<TokenId> special_token_id(std::string_view text) const;
  // The characters, then the special tokens.
  std::size_t vocab_size() const { return characters_.size() + special_tokens_.size(); }
  const std::vector<char32_t>& characters() const { return characters_; }
  const std::vector<std::string>& special_tokens() const { return special_tokens_; }

  // For checkpoints: the characters as one UTF-8 string, in id order (so it
  // fits a string field such as safetensors' metadata). The special tokens are
  // not in it: a checkpoint keeps them beside it (TextTokenizer::to_json).
  std::string serialize() const;

  // The inverse of serialize(), with the special tokens kept beside it. Throws
  // TokenizerError if the string is empty, not valid UTF-8, or not strictly
  // increasing (i.e. not written by serialize), or the special tokens are not
  // valid (see the constructor).
  static CharTokenizer deserialize(std::string_view serialized, std::vector<std::string> special_tokens = {});

 private:
  std::vector<TokenId> encode_with(std::string_view text, std::optional<TokenId> fallback_id) const;
  // Appends the ids of text that holds no special token; `first_index` and
  // `first_offset` place it in the whole text, for the error message.
  void encode_characters(std::string_view text, std::size_t first_index, std::size_t first_offset,
                         std::optional<TokenId> fallback_id, std::vector<TokenId>& ids) const;

  std::vector<char32_t> characters_;  // sorted, distinct: id -> character
  std::array<TokenId, 128> ascii_ids_;  // ASCII character -> id, or no_token
  std::vector<std::string> special_tokens_;  // id characters_.size() + i -> special_tokens_[i]
  // Finds the special tokens in a text; shared, as it is never changed (null without special tokens).
  std::shared_ptr<const HfAddedTokenMatcher> special_matcher_;
};

}  // namespace tg::tokenizer
