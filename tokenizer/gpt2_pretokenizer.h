// GPT-2's pre-tokenisation: cutting text into the pieces that BPE then merges
// inside, never across.
//
// GPT-2 (and tiktoken's "gpt2" encoding) cut text with this regular expression,
// trying the alternatives left to right at each position:
//
//   's|'t|'re|'ve|'m|'ll|'d      English contractions (lower case only)
//   | ?\p{L}+                    a run of letters, optionally led by one space
//   | ?\p{N}+                    a run of digits/numerals, optionally led by one space
//   | ?[^\s\p{L}\p{N}]+          a run of other symbols, optionally led by one space
//   |\s+(?!\S)                   whitespace not followed by a non-space: a run
//                                of whitespace gives up its last character, so
//                                that " word" keeps its leading space...
//   |\s+                         ...unless that leaves nothing (a lone "\n" before
//                                a word), or the run ends the text
//
// Gpt2PieceScanner is a hand-written scanner that makes the same cuts without
// a regex engine (see char_class.h for \p{L}, \p{N} and \s). Bytes that are not
// valid UTF-8 count as 'other' symbols, so any byte string can be cut, and the
// pieces always concatenate back to the input.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

namespace tg::tokenizer {

class Gpt2PieceScanner {
 public:
  explicit Gpt2PieceScanner(std::string_view text) : text_(text) {}

  // The next piece (a view into the text), or an empty view once the text is
  // exhausted. Pieces are never empty otherwise.
  std::string_view next();

 private:
  std::string_view text_;
  std::size_t position_ = 0;
};

// All the pieces at once: convenient for tests and for training.
std::vector<std::string_view> split_gpt2_pieces(std::string_view text);

}  // namespace tg::tokenizer
