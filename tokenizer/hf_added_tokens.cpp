#include "tinygpt/tokenizer/hf_added_tokens.h"

#include <algorithm>

#include "tinygpt/tokenizer/char_class.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

// Rust's char::is_alphanumeric: the general categories L* and N*.
bool is_alphanumeric(char32_t code_point) {
  const CharClass kind = classify_code_point(code_point);
  return kind == CharClass::letter || kind == CharClass::number;
}

// Where the character that ends text[0, end) starts (end > 0, valid UTF-8).
std::size_t start_of_character_before(std::string_view text, std::size_t end) {
  std::size_t start = end - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return start;
}

char32_t character_before(std::string_view text, std::size_t end) {
  return decode_utf8_char(text, start_of_character_before(text, end)).code_point;
}

}  // namespace

HfAddedTokenMatcher::HfAddedTokenMatcher(std::vector<HfAddedToken> tokens) : tokens_(std::move(tokens)) {
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const std::string& content = tokens_[i].content;
    by_content_.emplace(content, i);
    first_bytes_.set(static_cast<unsigned char>(content.front()));
    if (std::find(lengths_.begin(), lengths_.end(), content.size()) == lengths_.end()) lengths_.push_back(content.size());
  }
  std::sort(lengths_.rbegin(), lengths_.rend());
}

const HfAddedToken* HfAddedTokenMatcher::longest_at(std::string_view text, std::size_t at) const {
  for (const std::size_t length : lengths_) {
    if (length > text.size() - at) continue;
    const auto found = by_content_.find(text.substr(at, length));
    if (found != by_content_.end()) return &tokens_[found->second];
  }
  return nullptr;
}

void HfAddedTokenMatcher::split(std::string_view text, std::vector<HfSegment>& out) const {
  std::size_t done = 0;  // text[0, done) is in `out`
  for (std::size_t at = 0; at < text.size(); ++at) {
    if (!first_bytes_.test(static_cast<unsigned char>(text[at]))) continue;
    const HfAddedToken* token = longest_at(text, at);
    if (!token) continue;
    std::size_t start = at, stop = at + token->content.size();
    if (token->single_word) {
      const bool word_before = start > 0 && is_alphanumeric(character_before(text, start));
      const bool word_after = stop < text.size() && is_alphanumeric(decode_utf8_char(text, stop).code_point);
      if (word_before || word_after) continue;
    }
    if (token->lstrip) {
      while (start > done && is_unicode_whitespace(character_before(text, start)))
        start = start_of_character_before(text, start);
    }
    if (token->rstrip) {
      while (stop < text.size()) {
        const Utf8Char next = decode_utf8_char(text, stop);
        if (!is_unicode_whitespace(next.code_point)) break;
        stop += next.length;
      }
    }
    out.push_back({done, start, no_token});
    out.push_back({start, stop, token->id});
    done = stop;
    at = stop - 1;
  }
  out.push_back({done, text.size(), no_token});
}

}  // namespace tg::tokenizer
