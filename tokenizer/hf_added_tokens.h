// The "added_tokens" of a Hugging Face tokenizer.json: strings such as
// "<|im_end|>" or "<s>" that are found in the text and become their id before
// anything else looks at it, as the Rust library's AddedVocabulary does.
//
// Matching is leftmost-longest ("<|im_start|>" wins over "<|im"), scanning the
// text once. Each token's flags:
//   lstrip / rstrip  the token takes the whitespace before / after it
//   single_word      the token counts only when no letter or digit touches it
//   normalized       false (every special token that ships): matched in the
//                    raw text; true: matched in the normalized text, its
//                    content normalized the same way
//   special          decode(..., skip_special_tokens) leaves it out
#pragma once

#include <bitset>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tinygpt/tokenizer/token_id.h"

namespace tg::tokenizer {

struct HfAddedToken {
  TokenId id;
  std::string content;
  bool special = false;
  bool single_word = false;
  bool lstrip = false;
  bool rstrip = false;
  bool normalized = false;
};

// A part of a text: an added token, or text between tokens (token == no_token).
struct HfSegment {
  std::size_t start;
  std::size_t end;
  TokenId token;
};

class HfAddedTokenMatcher {
 public:
  HfAddedTokenMatcher() = default;
  // The tokens this matcher finds (their contents non-empty and distinct).
  explicit HfAddedTokenMatcher(std::vector<HfAddedToken> tokens);

  bool empty() const { return tokens_.empty(); }
  // Cuts `text` (valid UTF-8) into segments, in order; text segments may be empty.
  void split(std::string_view text, std::vector<HfSegment>& out) const;

 private:
  // The longest token that starts at text[at..], or nullptr.
  const HfAddedToken* longest_at(std::string_view text, std::size_t at) const;

  std::vector<HfAddedToken> tokens_;
  std::unordered_map<std::string_view, std::size_t> by_content_;  // content (in tokens_) -> index
  std::vector<std::size_t> lengths_;                              // distinct content lengths, longest first
  std::bitset<256> first_bytes_;                                  // bytes that start some token
};

}  // namespace tg::tokenizer
