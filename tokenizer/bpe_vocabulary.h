// A byte-level BPE vocabulary: the tokens (byte strings, indexed by id), the
// merges that built them, and the special tokens.
//
// Ranks. BPE encodes a piece by repeatedly merging the adjacent pair of tokens
// with the lowest rank. Like tiktoken, we rank a pair by the id of the token
// its two halves concatenate to (GPT-2's ids follow the order of vocab.bpe, so
// this is the merge order), and a pair merges whenever that concatenation is a
// token, whichever line of vocab.bpe produced it. The constructor checks the
// invariants that make this well defined:
//
//   - every one of the 256 bytes is a token;
//   - ordinary tokens are distinct byte strings;
//   - merge i joins two existing tokens into a token with a larger id than
//     both, and the ids produced by the merges increase with i;
//   - every ordinary token longer than one byte is produced by some merge
//     (a token nothing produces is unreachable, and usually means a
//     truncated merges file).
//
// Special tokens (e.g. "<|endoftext|>") are not reached by merging: their
// bytes are matched as a whole, and only when the caller asks.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/hash_tables.h"

namespace tg::tokenizer {

struct Merge {
  TokenId left;
  TokenId right;
};

class BpeVocabulary {
 public:
  BpeVocabulary() = default;

  // tokens[id] holds the bytes of token `id`. Throws TokenizerError, naming the
  // offending token or merge, if an invariant above does not hold.
  BpeVocabulary(std::vector<std::string> tokens, std::vector<Merge> merges,
                std::vector<TokenId> special_ids);

  std::size_t size() const { return offsets_.empty() ? 0 : offsets_.size() - 1; }

  // The bytes of a token; id must be < size().
  std::string_view token_bytes(TokenId id) const {
    return std::string_view(arena_).substr(offsets_[id], offsets_[id + 1] - offsets_[id]);
  }

  // The ordinary token with exactly these bytes, or no_token.
  TokenId find(std::string_view bytes) const {
    return index_.find(bytes, [this](TokenId id) { return token_bytes(id); });
  }

  // The token of a single byte.
  TokenId byte_token(unsigned char byte) const { return byte_tokens_[byte]; }
  // The number of bytes of token `id` (token_bytes(id).size(), without the view).
  std::size_t token_length(TokenId id) const { return offsets_[id + 1] - offsets_[id]; }

  // The token that two adjacent tokens merge into, or no_token. Its id is the
  // pair's rank: lower merges first.
  TokenId merged(TokenId left, TokenId right) const { return pairs_.find(left, right); }

  const std::vector<Merge>& merges() const { return merges_; }
  const std::vector<TokenId>& special_ids() const { return special_ids_; }
  bool is_special(TokenId id) const;

 private:
  std::string arena_;                 // the bytes of every token, back to back
  std::vector<std::size_t> offsets_;  // token id -> its start in arena_; one extra at the end
  TokenIndex index_;                  // ordinary tokens only
  PairTable pairs_;
  std::vector<TokenId> byte_tokens_ = std::vector<TokenId>(256, no_token);
  std::vector<Merge> merges_;
  std::vector<TokenId> special_ids_;
};

}  // namespace tg::tokenizer
