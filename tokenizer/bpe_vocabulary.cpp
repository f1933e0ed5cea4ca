// Building a BPE vocabulary: checking its invariants, then filling the two
// look-up tables that encoding needs.
#include "tinygpt/tokenizer/bpe_vocabulary.h"

#include <algorithm>

#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::tokenizer {

namespace {

struct MergeablePair {
  TokenId left, right, merged;
};

std::string merge_label(std::size_t index) { return "merge " + std::to_string(index + 1); }

// "'Ġworld' (id 995)": names a token in messages, written in GPT-2's alphabet.
std::string describe_token(const BpeVocabulary& vocabulary, TokenId id) {
  if (id >= vocabulary.size()) return "id " + std::to_string(id);
  // Built by appending: GCC 12 warns falsely (-Wrestrict) on "'" + std::string.
  std::string label = "'";
  label += bytes_to_alphabet_text(vocabulary.token_bytes(id));
  label += "' (id " + std::to_string(id) + ")";
  return label;
}

// For every ordinary token, the longest shorter ordinary token that begins it
// (or, from_end, that ends it); no_token where there is none. Sorted by their
// bytes (read backwards for endings), the tokens that begin a token come before
// it, each beginning the next, and every token between them begins with them
// too: a stack of that chain finds them all in one pass.
std::vector<TokenId> longest_inner_tokens(const BpeVocabulary& vocabulary, const std::vector<bool>& special,
                                          bool from_end) {
  const auto bytes_of = [&](TokenId id) { return vocabulary.token_bytes(id); };
  std::vector<TokenId> ordered;
  for (TokenId id = 0; id < vocabulary.size(); ++id)
    if (!special[id]) ordered.push_back(id);
  const auto unsigned_less = [](unsigned char a, unsigned char b) { return a < b; };
  std::sort(ordered.begin(), ordered.end(), [&](TokenId a, TokenId b) {
    const std::string_view x = bytes_of(a), y = bytes_of(b);
    return from_end ? std::lexicographical_compare(x.rbegin(), x.rend(), y.rbegin(), y.rend(), unsigned_less)
                    : std::lexicographical_compare(x.begin(), x.end(), y.begin(), y.end(), unsigned_less);
  });
  const auto contains_at_edge = [&](std::string_view token, std::string_view inner) {
    return inner.size() < token.size() && (from_end ? token.ends_with(inner) : token.starts_with(inner));
  };
  std::vector<TokenId> inner(vocabulary.size(), no_token);
  std::vector<TokenId> chain;
  for (TokenId id : ordered) {
    while (!chain.empty() && !contains_at_edge(bytes_of(id), bytes_of(chain.back()))) chain.pop_back();
    if (!chain.empty()) inner[id] = chain.back();
    chain.push_back(id);
  }
  return inner;
}

// Every (left, right) -> merged where left's bytes then right's are merged's:
// the token's beginnings and endings that are tokens, matched by length. The
// work grows with the vocabulary's bytes, not with their square (trying every
// split of a 64 KB token, from BPE training on one long line, took seconds).
std::vector<MergeablePair> mergeable_pairs(const BpeVocabulary& vocabulary, const std::vector<bool>& special) {
  const std::vector<TokenId> beginning = longest_inner_tokens(vocabulary, special, false);
  const std::vector<TokenId> ending = longest_inner_tokens(vocabulary, special, true);
  std::vector<MergeablePair> pairs;
  std::vector<TokenId> endings;  // of one token, shortest first
  for (TokenId id = 0; id < vocabulary.size(); ++id) {
    const std::size_t length = vocabulary.token_bytes(id).size();
    if (special[id] || length < 2) continue;
    endings.clear();
    for (TokenId end = ending[id]; end != no_token; end = ending[end]) endings.push_back(end);
    std::reverse(endings.begin(), endings.end());
    // Beginnings come longest first, so the ending each needs gets longer: one pass over both.
    auto candidate = endings.begin();
    for (TokenId begin = beginning[id]; begin != no_token; begin = beginning[begin]) {
      const std::size_t needed = length - vocabulary.token_bytes(begin).size();
      while (candidate != endings.end() && vocabulary.token_bytes(*candidate).size() < needed) ++candidate;
      if (candidate != endings.end() && vocabulary.token_bytes(*candidate).size() == needed)
        pairs.push_back({begin, *candidate, id});
    }
  }
  return pairs;
}

}  // namespace

bool BpeVocabulary::is_special(TokenId id) const {
  return std::find(special_ids_.begin(), special_ids_.end(), id) != special_ids_.end();
}

BpeVocabulary::BpeVocabulary(std::vector<std::string> tokens, std::vector<Merge> merges,
                             std::vector<TokenId> special_ids)
    : merges_(std::move(merges)), special_ids_(std::move(special_ids)) {
  offsets_.reserve(tokens.size() + 1);
  for (const std::string& bytes : tokens) {
    offsets_.push_back(arena_.size());
    arena_ += bytes;
  }
  offsets_.push_back(arena_.size());
  const TokenId count = static_cast<TokenId>(tokens.size());

  std::vector<bool> special(count, false);
  for (TokenId id : special_ids_) {
    if (id >= count) throw TokenizerError("special token id " + std::to_string(id) + " is outside the vocabulary");
    if (token_bytes(id).empty()) throw TokenizerError("special token id " + std::to_string(id) + " is empty");
    special[id] = true;
  }

  // Ordinary tokens: distinct, non-empty byte strings, indexed by their bytes.
  index_ = TokenIndex(count);
  const auto bytes_of = [this](TokenId id) { return token_bytes(id); };
  for (TokenId id = 0; id < count; ++id) {
    if (special[id]) continue;
    const std::string_view bytes = token_bytes(id);
    if (bytes.empty()) throw TokenizerError("token id " + std::to_string(id) + " is empty");
    const TokenId existing = find(bytes);
    if (existing != no_token) {
      throw TokenizerError("tokens " + describe_token(*this, existing) + " and " + describe_token(*this, id) +
                           " have the same bytes");
    }
    index_.insert(id, bytes_of);
    if (bytes.size() == 1) byte_tokens_[static_cast<unsigned char>(bytes[0])] = id;
  }
  for (int byte = 0; byte < 256; ++byte) {
    if (byte_tokens_[byte] == no_token) {
      throw TokenizerError("the single byte " + std::to_string(byte) + " ('" +
                           bytes_to_alphabet_text(std::string(1, static_cast<char>(byte))) +
                           "') has no token: a byte-level vocabulary needs all 256");
    }
  }

  // Merges: each joins two tokens into a later one, in increasing id order.
  std::vector<bool> produced(count, false);
  TokenId previous_result = 0;
  for (std::size_t i = 0; i < merges_.size(); ++i) {
    const Merge merge = merges_[i];
    if (merge.left >= count || merge.right >= count || special[merge.left] || special[merge.right]) {
      throw MergeError(merge_label(i) + " refers to a token id outside the ordinary vocabulary", i);
    }
    const std::string joined = std::string(token_bytes(merge.left)) + std::string(token_bytes(merge.right));
    const TokenId result = find(joined);
    const std::string what = merge_label(i) + " (" + describe_token(*this, merge.left) + " + " +
                             describe_token(*this, merge.right) + ")";
    if (result == no_token) {
      throw MergeError(what + " produces '" + bytes_to_alphabet_text(joined) + "', which is not a token", i);
    }
    if (result <= merge.left || result <= merge.right) {
      throw MergeError(what + " produces " + describe_token(*this, result) +
                           ", whose id should be larger than the ids of its parts", i);
    }
    if (result <= previous_result) {
      throw MergeError(what + " produces " + describe_token(*this, result) +
                           ", out of order: merges must produce increasing ids, since a token's id is its rank", i);
    }
    previous_result = result;
    produced[result] = true;
  }

  // Every split of every ordinary token into two tokens is a mergeable pair.
  // GPT-2's 50k tokens give ~300k pairs.
  for (TokenId id = 0; id < count; ++id) {
    if (!special[id] && token_bytes(id).size() >= 2 && !produced[id]) {
      throw TokenizerError("token " + describe_token(*this, id) +
                           " is not produced by any merge (is the merges file truncated?)");
    }
  }
  const std::vector<MergeablePair> pairs = mergeable_pairs(*this, special);
  pairs_ = PairTable(pairs.size());
  for (const MergeablePair& pair : pairs) pairs_.insert(pair.left, pair.right, pair.merged);
}

}  // namespace tg::tokenizer
