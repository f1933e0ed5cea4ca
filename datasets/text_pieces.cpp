#include "tinygpt/datasets/text_pieces.h"

#include <algorithm>

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

// Bytes asked of the stream at a time, at least (a piece can be smaller: tests cut tiny ones).
constexpr std::size_t kMinReadBytes = 1 << 16;
// A UTF-8 character has at most 4 bytes, so at most 3 of one can be cut short at the end of the buffer.
constexpr std::size_t kCutShortBytes = 3;

}  // namespace

TextPieceReader::TextPieceReader(std::istream& input, std::string name, std::size_t piece_bytes, FindCut find_cut)
    : input_(input), name_(std::move(name)), piece_bytes_(std::max<std::size_t>(piece_bytes, 1)), find_cut_(find_cut) {}

bool TextPieceReader::read_more() {
  if (!input_.good()) return false;
  // Drop what was handed out, then append one block.
  buffer_.erase(0, start_);
  start_ = 0;
  const std::size_t old_size = buffer_.size();
  const std::size_t block = std::max(piece_bytes_, kMinReadBytes);
  buffer_.resize(old_size + block);
  input_.read(buffer_.data() + old_size, static_cast<std::streamsize>(block));
  check(!input_.bad(), "error while reading '", name_, "' at byte ", start_offset_ + static_cast<int64_t>(old_size));
  buffer_.resize(old_size + static_cast<std::size_t>(input_.gcount()));
  return buffer_.size() > old_size;
}

bool TextPieceReader::next(std::string& piece) {
  while (true) {
    const std::string_view pending = std::string_view(buffer_).substr(start_);
    if (pending.size() > piece_bytes_) {
      const std::size_t cut = find_cut_(pending, std::max(piece_bytes_, searched_to_));
      if (cut != std::string_view::npos) {
        piece.assign(pending.substr(0, cut));
        piece_offset_ = start_offset_;
        start_ += cut;
        start_offset_ += static_cast<int64_t>(cut);
        searched_to_ = 0;
        return true;
      }
      // A character cut short by the end of the buffer may start a cut once the rest of it is read.
      searched_to_ = pending.size() - std::min(pending.size(), kCutShortBytes);
    }
    if (!read_more()) break;
  }
  if (start_ == buffer_.size()) return false;
  // The end of the stream ends the last piece.
  piece.assign(buffer_, start_);
  piece_offset_ = start_offset_;
  start_offset_ += static_cast<int64_t>(buffer_.size() - start_);
  start_ = buffer_.size();
  return true;
}

}  // namespace tg
