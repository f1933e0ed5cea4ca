// The scanner behind Gpt2PieceScanner. Each branch below is one alternative of
// GPT-2's pattern, in the pattern's order; the comments quote it.
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"

#include "tinygpt/tokenizer/char_class.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

struct ClassifiedChar {
  CharClass char_class;
  std::size_t length;  // in bytes
};

// The class and length of the character at text[offset]. ASCII is decided by
// one table look-up; anything else is decoded and classified.
inline ClassifiedChar classify_at(std::string_view text, std::size_t offset) {
  const auto byte = static_cast<unsigned char>(text[offset]);
  if (byte < 0x80) return {classify_code_point(byte), 1};
  const Utf8Char decoded = decode_utf8_char(text, offset);
  if (!decoded.valid) return {CharClass::other, 1};
  return {classify_code_point(decoded.code_point), decoded.length};
}

// The end of the run of characters of class `run_class` that starts at `offset`.
inline std::size_t end_of_run(std::string_view text, std::size_t offset, CharClass run_class) {
  while (offset < text.size()) {
    const ClassifiedChar c = classify_at(text, offset);
    if (c.char_class != run_class) break;
    offset += c.length;
  }
  return offset;
}

// The length of a contraction at text[offset] (which is an apostrophe), or 0.
inline std::size_t contraction_length(std::string_view text, std::size_t offset) {
  const std::size_t left = text.size() - offset;
  if (left >= 2) {
    const char c = text[offset + 1];
    if (c == 's' || c == 't' || c == 'm' || c == 'd') return 2;  // 's 't 'm 'd
  }
  if (left >= 3) {
    const std::string_view two = text.substr(offset + 1, 2);
    if (two == "ll" || two == "ve" || two == "re") return 3;  // 'll 've 're
  }
  return 0;
}

}  // namespace

std::string_view Gpt2PieceScanner::next() {
  const std::size_t start = position_;
  if (start >= text_.size()) return {};
  std::size_t end;

  const ClassifiedChar first = classify_at(text_, start);
  std::size_t contraction = 0;
  if (text_[start] == '\'') contraction = contraction_length(text_, start);

  if (contraction > 0) {
    // 's|'t|'re|'ve|'m|'ll|'d
    end = start + contraction;
  } else if (first.char_class != CharClass::whitespace) {
    // \p{L}+ | \p{N}+ | [^\s\p{L}\p{N}]+  (no leading space)
    end = end_of_run(text_, start, first.char_class);
  } else {
    const bool space = text_[start] == ' ';
    const ClassifiedChar second =
        start + 1 < text_.size() ? classify_at(text_, start + 1) : ClassifiedChar{CharClass::whitespace, 0};
    if (space && second.char_class != CharClass::whitespace) {
      // " ?\p{L}+ | ?\p{N}+ | ?[^\s\p{L}\p{N}]+" with the optional space taken
      end = end_of_run(text_, start + 1, second.char_class);
    } else {
      // \s+(?!\S) | \s+ : take the whole whitespace run, remembering where its
      // last character starts.
      std::size_t last_char = start;
      end = start;
      while (end < text_.size()) {
        const ClassifiedChar c = classify_at(text_, end);
        if (c.char_class != CharClass::whitespace) break;
        last_char = end;
        end += c.length;
      }
      // Followed by a non-space: \s+(?!\S) backtracks one character so the
      // lookahead sees whitespace, which it can only do if the run has two or
      // more characters. A lone whitespace character falls through to \s+.
      if (end < text_.size() && last_char > start) end = last_char;
    }
  }
  position_ = end;
  return text_.substr(start, end - start);
}

std::vector<std::string_view> split_gpt2_pieces(std::string_view text) {
  std::vector<std::string_view> pieces;
  Gpt2PieceScanner scanner(text);
  for (std::string_view piece = scanner.next(); !piece.empty(); piece = scanner.next()) {
    pieces.push_back(piece);
  }
  return pieces;
}

}  // namespace tg::tokenizer
