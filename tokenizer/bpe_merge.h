// Byte-pair merging of one pre-tokenised piece into token ids.
//
// Start from one token per byte; while some adjacent pair of tokens merges,
// merge the pair of lowest rank (the leftmost if several share it). Two ways
// to find that pair, with identical results:
//
//   merge_by_scan  scan all pairs each round: O(n^2) for n bytes, but with
//                  the smallest constant, so it wins on short pieces (words).
//   merge_by_heap  a min-heap of (rank, position) over the tokens, stale
//                  entries skipped when popped: O(n log n), for long pieces
//                  such as a megabyte of one letter, in about 12 bytes of
//                  memory per byte of the piece (the ids and the heap).
//
// encode_piece first tries the piece as a whole token (most words are), then
// picks the algorithm by length.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/bpe_vocabulary.h"

namespace tg::tokenizer {

// Pieces up to this many bytes are merged by scanning, longer ones by heap.
inline constexpr std::size_t longest_scanned_piece = 128;

// Each appends the ids of `piece` (non-empty) to `out`.
void encode_piece(const BpeVocabulary& vocabulary, std::string_view piece, std::vector<TokenId>& out);
void merge_by_scan(const BpeVocabulary& vocabulary, std::string_view piece, std::vector<TokenId>& out);
void merge_by_heap(const BpeVocabulary& vocabulary, std::string_view piece, std::vector<TokenId>& out);

}  // namespace tg::tokenizer
