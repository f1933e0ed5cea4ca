// Building a BPE vocabulary: checking its invariants, then filling the two
// look-up tables that encoding needs.
#include "tokenizer/bpe_vocabulary.h"

#include <algorithm>

#include "tokenizer/byte_alphabet.h"
#include "tokenizer/errors.h"

namespace tg::tokenizer {

namespace {

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
  // A token of n bytes has n-1 splits; GPT-2's 50k tokens give ~300k pairs.
  std::size_t pair_estimate = 0;
  for (TokenId id = 0; id < count; ++id) pair_estimate += special[id] ? 0 : token_bytes(id).size() - 1;
  pairs_ = PairTable(pair_estimate);
  for (TokenId id = 0; id < count; ++id) {
    const std::string_view bytes = token_bytes(id);
    if (special[id] || bytes.size() < 2) continue;
    if (!produced[id]) {
      throw TokenizerError("token " + describe_token(*this, id) +
                           " is not produced by any merge (is the merges file truncated?)");
    }
    for (std::size_t split = 1; split < bytes.size(); ++split) {
      const TokenId left = find(bytes.substr(0, split));
      const TokenId right = find(bytes.substr(split));
      if (left != no_token && right != no_token) pairs_.insert(left, right, id);
    }
  }
}

}  // namespace tg::tokenizer
