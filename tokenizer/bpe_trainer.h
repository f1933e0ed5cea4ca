// Training a byte-level BPE vocabulary, GPT-2 style.
//
// 1. Cut the corpus into pieces with GPT-2's pattern and count each distinct
//    piece ("word"). Merges never cross a piece boundary.
// 2. Start with the 256 byte tokens, numbered in GPT-2's byte order, and
//    count every adjacent pair of tokens over all words (times the word's count).
// 3. Repeatedly merge the most frequent pair into a new token, in every word,
//    updating the pair counts only around the merged positions, until the
//    vocabulary has the requested size or no pair occurs min_pair_count times.
//
// Tie-breaking, for a deterministic result: among pairs with the same count,
// the one whose (left bytes, right bytes) is smallest, comparing bytes as
// unsigned values, merges first. A pair whose bytes are already a token (e.g.
// "a"+"bc" after "ab"+"c" made "abc") merges into that token and adds no new
// line: encoding ranks a pair by the token it forms, so it will do the same.
//
// The result has ids 0..255 for the bytes, then one id per merge in order,
// then "<|endoftext|>": the layout of GPT-2's vocabulary, so it saves and
// loads with gpt2_files.h exactly like GPT-2's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "tinygpt/tokenizer/bpe_vocabulary.h"

namespace tg::tokenizer {

struct BpeTrainingOptions {
  // The whole vocabulary: 256 bytes + the merges + 1 for "<|endoftext|>".
  // GPT-2's is 50257; 1257 means 1000 merges. Must be at least 257.
  std::size_t vocab_size = 1257;
  // Stop early once the most frequent pair occurs fewer times than this.
  std::uint64_t min_pair_count = 2;
};

BpeVocabulary train_bpe(std::string_view corpus, const BpeTrainingOptions& options);

}  // namespace tg::tokenizer
