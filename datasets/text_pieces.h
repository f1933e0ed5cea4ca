// A text stream read a piece at a time, each piece ending at a safe cut
// (tokenizer/safe_cuts.h), so that a corpus larger than memory can be encoded
// piece by piece with the same ids as if it were encoded whole.
//
//   std::ifstream file(path, std::ios::binary);
//   TextPieceReader reader(file, path, 1 << 20, tokenizer::next_gpt2_cut);
//   for (std::string piece; reader.next(piece);) encode(piece);
//
// A piece is at least `piece_bytes` long (except the last) and ends at the
// first cut at or after that length; memory holds about two pieces. A stretch
// with no cut (a text without whitespace, for GPT-2) stays in one piece.
#pragma once

#include <cstddef>
#include <cstdint>
#include <istream>
#include <string>
#include <string_view>

namespace tg {

// next_character_cut or next_gpt2_cut.
using FindCut = std::size_t (*)(std::string_view text, std::size_t from);

class TextPieceReader {
 public:
  // `name` (the file's path) is what errors name.
  TextPieceReader(std::istream& input, std::string name, std::size_t piece_bytes, FindCut find_cut);

  // The next piece into `piece`; false once the stream is exhausted. Throws
  // tg::Error naming the stream when it fails to read.
  bool next(std::string& piece);
  // Where the piece returned last starts in the stream, in bytes.
  int64_t piece_offset() const { return piece_offset_; }

 private:
  // Appends the next block of the stream to the buffer; false at its end.
  bool read_more();

  std::istream& input_;
  std::string name_;
  std::size_t piece_bytes_;
  FindCut find_cut_;
  std::string buffer_;           // buffer_[start_, size) is read but not yet handed out
  std::size_t start_ = 0;
  std::size_t searched_to_ = 0;  // no cut in [piece_bytes_, searched_to_) after start_
  int64_t piece_offset_ = 0;
  int64_t start_offset_ = 0;     // where buffer_[start_] is in the stream
};

}  // namespace tg
