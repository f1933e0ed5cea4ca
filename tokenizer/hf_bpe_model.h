// The BPE model of a Hugging Face tokenizer.json ("model": {"type": "BPE"}):
// a vocabulary (token text -> id) and a ranked list of merges.
//
// A piece is encoded as the Rust library does (models/bpe/model.rs):
//   - with ignore_merges (Llama 3), a piece that is itself a token is that token;
//   - otherwise start from one symbol per character (per byte for a byte-level
//     vocabulary), each looked up in the vocabulary; a character that is not
//     there becomes its bytes' "<0xNN>" tokens (byte_fallback, Llama 2), or
//     the unknown token (consecutive ones fused into one with fuse_unk), or is
//     dropped when the model has neither;
//   - then repeatedly merge the adjacent pair whose merge comes first in the
//     file, the leftmost on a tie. Short pieces scan all pairs each round
//     (O(n^2) with a tiny constant); long ones keep a min-heap of candidate
//     merges (O(n log n)), as bpe_merge.h does for GPT-2.
//
// Unlike BpeVocabulary (GPT-2), a merge's rank is its line in the file, not
// the id it produces: Hugging Face files do not promise the two agree.
//
// SentencePiece-style files (Llama 2, Mistral) have no pre-tokenizer: the whole
// text between added tokens is one piece, ~1 MB for a book, merged at once.
// When no token has "▁" after another character (checked on load), no merge
// crosses the point before a "▁" that follows another character, so the piece
// is encoded word by word there with the same result, and far faster.
//
// Byte-level vocabularies (the pre-tokenizer has a ByteLevel step) store tokens
// in GPT-2's byte alphabet ("Ġworld"); they are kept here as the bytes they
// stand for (" world"), so the text is never mapped to that alphabet and back.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/hash_tables.h"
#include "tinygpt/tokenizer/hf_json.h"

namespace tg::tokenizer {

// Ids above this are refused (the tables are indexed by id).
inline constexpr std::size_t hf_max_vocab_size = std::size_t{1} << 24;

class HfBpeModel {
 public:
  HfBpeModel() = default;
  // `field` is the "model" node. Throws TokenizerFileError naming the field.
  static HfBpeModel read(const HfField& field, bool byte_level);

  // Appends the ids of one piece (non-empty, valid UTF-8).
  void encode_piece(std::string_view piece, std::vector<TokenId>& out) const;

  // One more than the largest id of the vocabulary.
  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }
  // The number of tokens (size() when the ids have no gaps).
  std::size_t token_count() const { return token_count_; }
  bool has(TokenId id) const { return id < size() && present_[id]; }
  // The token's bytes (byte-level: decoded from the alphabet). `id` must be present.
  std::string_view token_bytes(TokenId id) const {
    return std::string_view(arena_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }
  // The token as the file writes it ("Ġworld" in a byte-level vocabulary).
  std::string token_text(TokenId id) const;
  // The id of a token written as the file writes it, or nothing.
  std::optional<TokenId> find_text(std::string_view text) const;
  bool byte_level() const { return byte_level_; }

 private:
  TokenId find_bytes(std::string_view bytes) const {
    return index_.find(bytes, [this](TokenId id) { return token_bytes(id); });
  }
  // Encodes a piece that no merge crosses (a word), ignore_merges aside.
  void encode_word(std::string_view word, std::vector<TokenId>& out) const;
  // The initial symbols of a piece (see above), appended to `symbols`.
  void initial_symbols(std::string_view piece, std::vector<TokenId>& symbols) const;
  void merge_by_scan(std::vector<TokenId>& symbols) const;
  void merge_by_heap(std::vector<TokenId>& symbols) const;

  std::string arena_;                 // the bytes of every token, back to back
  std::vector<std::size_t> offsets_;  // id -> its start in arena_; one extra at the end
  std::vector<bool> present_;         // ids may have gaps
  TokenIndex index_;                  // bytes -> id
  PairTable ranks_;                   // (left, right) -> the merge's rank (its index in the file)
  std::vector<TokenId> merged_;       // rank -> the id the merge produces
  TokenId byte_tokens_[256];          // byte-level: the token of each byte, or no_token
  std::size_t token_count_ = 0;
  bool byte_level_ = false;
  bool ignore_merges_ = false;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  TokenId unk_ = no_token;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  std::string word_start_;  // "▁" when pieces may be cut before it (see above), else empty
};

}  // namespace tg::tokenizer
