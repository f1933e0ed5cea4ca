// GPT-2's byte-level BPE tokenizer, token for token the same as tiktoken's
// "gpt2" encoding.
//
// encode: cut the text into pieces with GPT-2's pattern (gpt2_pretokenizer.h),
//         then merge each piece's bytes into tokens (bpe_merge.h).
// decode: concatenate the tokens' bytes.
//
// Any byte string round-trips: decode(encode(s)) == s, including bytes that
// are not valid UTF-8 (the pre-tokeniser treats each as a symbol, and every
// byte is a token). Special tokens such as "<|endoftext|>" are ordinary text
// unless the caller asks for SpecialTokens::recognised, as tiktoken's
// encode_ordinary does and its encode(allowed_special=...) does not.
//
// Encoding is read-only on the tokenizer, so one tokenizer may serve many
// threads at once.
#pragma once

#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/bpe_vocabulary.h"

namespace tg::tokenizer {

enum class SpecialTokens {
  as_text,     // "<|endoftext|>" is encoded like any other text (the default)
  recognised,  // "<|endoftext|>" becomes its own id, 50256 in GPT-2
};

class Gpt2Tokenizer {
 public:
  explicit Gpt2Tokenizer(BpeVocabulary vocabulary) : vocabulary_(std::move(vocabulary)) {}

  // Loads encoder.json and vocab.bpe from a directory (see gpt2_files.h).
  static Gpt2Tokenizer load(const std::filesystem::path& directory);
  void save(const std::filesystem::path& directory) const;

  std::vector<TokenId> encode(std::string_view text, SpecialTokens specials = SpecialTokens::as_text) const;

  // Appends to `ids` instead of returning a new vector.
  void encode_into(std::string_view text, std::vector<TokenId>& ids,
                   SpecialTokens specials = SpecialTokens::as_text) const;

  // The bytes of the tokens, concatenated. Throws DecodeError naming the first
  // id that is not in the vocabulary and its position in `ids`.
  std::string decode(std::span<const TokenId> ids) const;

  // A token as GPT-2's files write it: " world" is "Ġworld".
  std::string token_text(TokenId id) const;

  // The id of a special token ("<|endoftext|>"), if the vocabulary has it.
  std::optional<TokenId> special_token(std::string_view text) const;

  std::size_t vocab_size() const { return vocabulary_.size(); }
  const BpeVocabulary& vocabulary() const { return vocabulary_; }

 private:
  void encode_ordinary(std::string_view text, std::vector<TokenId>& ids) const;

  BpeVocabulary vocabulary_;
};

}  // namespace tg::tokenizer
