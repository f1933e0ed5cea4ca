// The two merge algorithms. A pair's rank is the id of the token it merges
// into (see bpe_vocabulary.h); no_token, the largest id, stands for "does not
// merge", so a plain minimum finds the next merge.
#include "tinygpt/tokenizer/bpe_merge.h"

#include <cstdint>
#include <algorithm>
#include <functional>

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
  // Tokens are named by the byte offset where they start: ids[start] is the token there, and
  // every other byte of it holds no_token. So the next token starts where this one's bytes end,
  // and the previous one at the nearest byte before that holds an id (a token is at most the
  // vocabulary's longest), and one array of 4 bytes a byte is all the state.
  const std::uint32_t count = static_cast<std::uint32_t>(piece.size());
  std::vector<TokenId> ids(count);
  for (std::uint32_t i = 0; i < count; ++i) ids[i] = vocabulary.byte_token(static_cast<unsigned char>(piece[i]));
  const auto next = [&](std::uint32_t start) {
    return start + static_cast<std::uint32_t>(vocabulary.token_length(ids[start]));  // == count: no next token
  };
  const auto previous = [&](std::uint32_t start) {  // == count: no previous token
    while (start > 0)
      if (ids[--start] != no_token) return start;
    return count;
  };
  const auto rank_at = [&](std::uint32_t start) {
    const std::uint32_t following = next(start);
    return following >= count ? no_token : vocabulary.merged(ids[start], ids[following]);
  };

  // A candidate merge of the token at `start` with its successor. It is stale once either token
  // has changed, which shows when popped: the pair there no longer merges into `rank`. (If it
  // does, whatever happened between, merging it now is right: every pair that exists is in the
  // heap, so the smallest entry that still holds is the lowest-ranked pair, leftmost on a tie.)
  // 8 bytes, not 16 with both ids: on a long piece the heap is most of the memory.
  struct Candidate {
    TokenId rank;
    std::uint32_t start;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : start > other.start;
    }
  };
  const auto still_holds = [&](const Candidate& candidate) {
    return ids[candidate.start] != no_token && rank_at(candidate.start) == candidate.rank;
  };
  std::vector<Candidate> heap;  // a min-heap under std::greater
  heap.reserve(count);
  for (std::uint32_t i = 0; i + 1 < count; ++i)
    if (const TokenId rank = rank_at(i); rank != no_token) heap.push_back({rank, i});
  std::make_heap(heap.begin(), heap.end(), std::greater<>());  // linear, where pushing one by one is n log n
  const auto consider = [&](std::uint32_t start) {
    const TokenId rank = rank_at(start);
    if (rank == no_token) return;
    if (heap.size() == heap.capacity()) {
      // Full: drop the stale entries rather than double the heap, which would double its memory.
      std::erase_if(heap, [&](const Candidate& candidate) { return !still_holds(candidate); });
      std::make_heap(heap.begin(), heap.end(), std::greater<>());
    }
    heap.push_back({rank, start});
    std::push_heap(heap.begin(), heap.end(), std::greater<>());
  };

  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const Candidate candidate = heap.back();
    heap.pop_back();
    if (!still_holds(candidate)) continue;
    const std::uint32_t start = candidate.start;
    ids[next(start)] = no_token;  // before ids[start] changes, which moves next(start)
    ids[start] = candidate.rank;
    if (const std::uint32_t before = previous(start); before < count) consider(before);
    consider(start);
  }
  for (std::uint32_t i = 0; i < count; i = next(i)) out.push_back(ids[i]);
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
