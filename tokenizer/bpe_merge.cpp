// The two merge algorithms. A pair's rank is the id of the token it merges
// into (see bpe_vocabulary.h); no_token, the largest id, stands for "does not
// merge", so a plain minimum finds the next merge.
#include "tinygpt/tokenizer/bpe_merge.h"

#include <cstdint>
#include <queue>

namespace tg::tokenizer {

namespace {

// The scan over arrays the caller provides: ids[i] is the i-th token,
// ranks[i] the rank of merging it with token i+1.
void merge_by_scan_into(const BpeVocabulary& vocabulary, std::string_view piece, TokenId* ids, TokenId* ranks,
                        std::vector<TokenId>& out) {
  std::size_t count = piece.size();
  for (std::size_t i = 0; i < count; ++i) ids[i] = vocabulary.byte_token(static_cast<unsigned char>(piece[i]));
  for (std::size_t i = 0; i + 1 < count; ++i) ranks[i] = vocabulary.merged(ids[i], ids[i + 1]);
  ranks[count - 1] = no_token;

  while (count > 1) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < count; ++i) {
      if (ranks[i] < ranks[best]) best = i;  // strict: the leftmost wins ties
    }
    if (ranks[best] == no_token) break;
    ids[best] = ranks[best];
    for (std::size_t i = best + 1; i + 1 < count; ++i) ids[i] = ids[i + 1], ranks[i] = ranks[i + 1];
    --count;
    ranks[best] = best + 1 < count ? vocabulary.merged(ids[best], ids[best + 1]) : no_token;
    if (best > 0) ranks[best - 1] = vocabulary.merged(ids[best - 1], ids[best]);
  }
  out.insert(out.end(), ids, ids + count);
}

}  // namespace

void merge_by_scan(const BpeVocabulary& vocabulary, std::string_view piece, std::vector<TokenId>& out) {
  if (piece.size() <= longest_scanned_piece) {
    TokenId ids[longest_scanned_piece];
    TokenId ranks[longest_scanned_piece];
    merge_by_scan_into(vocabulary, piece, ids, ranks, out);
  } else {
    std::vector<TokenId> ids(piece.size()), ranks(piece.size());
    merge_by_scan_into(vocabulary, piece, ids.data(), ranks.data(), out);
  }
}

void merge_by_heap(const BpeVocabulary& vocabulary, std::string_view piece, std::vector<TokenId>& out) {
  // Tokens are named by the byte offset where they start; a merged-away token
  // gets id no_token. next/previous link the live tokens in order.
  const std::uint32_t count = static_cast<std::uint32_t>(piece.size());
  std::vector<TokenId> ids(count);
  std::vector<std::uint32_t> next(count), previous(count);
  for (std::uint32_t i = 0; i < count; ++i) {
    ids[i] = vocabulary.byte_token(static_cast<unsigned char>(piece[i]));
    next[i] = i + 1;                              // == count: no next token
    previous[i] = i == 0 ? count : i - 1;         // == count: no previous token
  }

  // A candidate merge of the token at `start` with its successor, valid only
  // while both still hold the ids recorded here.
  struct Candidate {
    TokenId rank;
    std::uint32_t start;
    TokenId left;
    TokenId right;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : start > other.start;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> candidates;
  const auto consider = [&](std::uint32_t start) {
    const std::uint32_t following = next[start];
    if (following >= count) return;
    const TokenId rank = vocabulary.merged(ids[start], ids[following]);
    if (rank != no_token) candidates.push({rank, start, ids[start], ids[following]});
  };
  for (std::uint32_t i = 0; i + 1 < count; ++i) consider(i);

  while (!candidates.empty()) {
    const Candidate candidate = candidates.top();
    candidates.pop();
    const std::uint32_t start = candidate.start;
    const std::uint32_t following = next[start];
    if (ids[start] != candidate.left || following >= count || ids[following] != candidate.right) continue;
    ids[start] = candidate.rank;
    ids[following] = no_token;
    next[start] = next[following];
    if (next[start] < count) previous[next[start]] = start;
    if (previous[start] < count) consider(previous[start]);
    consider(start);
  }
  for (std::uint32_t i = 0; i < count; i = next[i]) out.push_back(ids[i]);
}

void encode_piece(const BpeVocabulary& vocabulary, std::string_view piece, std::vector<TokenId>& out) {
  const TokenId whole = vocabulary.find(piece);
  if (whole != no_token) {
    out.push_back(whole);
  } else if (piece.size() <= longest_scanned_piece) {
    merge_by_scan(vocabulary, piece, out);
  } else {
    merge_by_heap(vocabulary, piece, out);
  }
}

}  // namespace tg::tokenizer
