// The BPE training loop of bpe_trainer.h.
//
// Data: the tokens of every distinct word are nodes of one array, each linked
// to its neighbours within its word and weighted by the word's count;
// pair_counts holds, for every adjacent pair, the number of times it occurs in
// the corpus; positions lists the nodes where a pair may begin (entries may be
// stale, and are checked when used). A merge visits only the positions of its
// pair, so training costs O(n log n) in the corpus's distinct bytes even when
// one word is the whole corpus (a line without spaces), where rewriting whole
// words at every merge cost O(merges x n). A max-heap of (count, pair) finds
// the next merge; an entry whose count is no longer current is skipped, because
// a fresh entry was pushed when the count changed.
#include "tinygpt/tokenizer/bpe_trainer.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"

namespace tg::tokenizer {

namespace {

using PairKey = std::uint64_t;

PairKey pair_key(TokenId left, TokenId right) { return static_cast<PairKey>(left) << 32 | right; }
TokenId left_of(PairKey key) { return static_cast<TokenId>(key >> 32); }
TokenId right_of(PairKey key) { return static_cast<TokenId>(key); }

using Node = std::uint32_t;
constexpr Node no_node = std::numeric_limits<Node>::max();

// Every word's tokens, left to right, words one after another.
struct Nodes {
  std::vector<TokenId> token;   // no_token once merged into its left neighbour
  std::vector<Node> previous, next;  // no_node at the edges of a word
  std::vector<std::uint64_t> weight;  // how often its word occurs
};

struct HeapEntry {
  std::uint64_t count;
  PairKey pair;
};

class Trainer {
 public:
  Trainer(std::string_view corpus, const BpeTrainingOptions& options) : options_(options) {
    count_words(corpus);
    count_pairs();
  }

  BpeVocabulary run() {
    const std::size_t target_tokens = options_.vocab_size - 1;  // the last id is "<|endoftext|>"
    while (tokens_.size() < target_tokens) {
      const std::optional<PairKey> best = pop_best_pair();
      if (!best) break;
      merge(*best);
    }
    std::vector<std::string> tokens = std::move(tokens_);
    const TokenId end_of_text = static_cast<TokenId>(tokens.size());
    tokens.push_back("<|endoftext|>");
    return BpeVocabulary(std::move(tokens), std::move(merges_), {end_of_text});
  }

 private:
  void count_words(std::string_view corpus) {
    std::unordered_map<std::string_view, std::uint64_t> piece_counts;
    Gpt2PieceScanner scanner(corpus);
    for (std::string_view piece = scanner.next(); !piece.empty(); piece = scanner.next()) ++piece_counts[piece];

    for (int i = 0; i < 256; ++i) {
      const std::uint8_t byte = byte_order()[i];
      byte_ids_[byte] = static_cast<TokenId>(i);
      tokens_.emplace_back(1, static_cast<char>(byte));
      id_of_.emplace(tokens_.back(), static_cast<TokenId>(i));
    }
    std::size_t total_bytes = 0;
    for (const auto& [piece, count] : piece_counts) total_bytes += piece.size();
    if (total_bytes >= no_node) {
      throw TokenizerError("BPE training: the corpus has " + std::to_string(total_bytes) +
                           " bytes of distinct words, more than the trainer's limit of " + std::to_string(no_node - 1));
    }
    for (const auto& [piece, count] : piece_counts) {
      for (std::size_t i = 0; i < piece.size(); ++i) {
        const Node node = static_cast<Node>(nodes_.token.size());
        nodes_.token.push_back(byte_ids_[static_cast<std::uint8_t>(piece[i])]);
        nodes_.previous.push_back(i == 0 ? no_node : node - 1);
        nodes_.next.push_back(i + 1 == piece.size() ? no_node : node + 1);
        nodes_.weight.push_back(count);
      }
    }
  }

  void count_pairs() {
    for (Node node = 0; node < nodes_.token.size(); ++node) {
      const Node next = nodes_.next[node];
      if (next == no_node) continue;
      const PairKey key = pair_key(nodes_.token[node], nodes_.token[next]);
      pair_counts_[key] += nodes_.weight[node];
      positions_[key].push_back(node);
    }
    for (const auto& [key, count] : pair_counts_) heap_.push({count, key});
  }

  // Orders the heap: higher count first, then smaller (left bytes, right bytes).
  struct LowerPriority {
    const std::vector<std::string>* tokens;
    bool operator()(const HeapEntry& a, const HeapEntry& b) const {
      if (a.count != b.count) return a.count < b.count;
      const auto bytes = [this](TokenId id) {
        const std::string& s = (*tokens)[id];
        return std::basic_string_view<unsigned char>(reinterpret_cast<const unsigned char*>(s.data()), s.size());
      };
      if (left_of(a.pair) != left_of(b.pair)) return bytes(left_of(a.pair)) > bytes(left_of(b.pair));
      return bytes(right_of(a.pair)) > bytes(right_of(b.pair));
    }
  };

  std::optional<PairKey> pop_best_pair() {
    while (!heap_.empty()) {
      const HeapEntry top = heap_.top();
      heap_.pop();
      const auto current = pair_counts_.find(top.pair);
      if (current == pair_counts_.end() || current->second != top.count) continue;  // stale
      if (top.count < options_.min_pair_count) return std::nullopt;
      return top.pair;
    }
    return std::nullopt;
  }

  // A pair's count changes by delta at `node`, where a pair now begins when delta > 0.
  void add_to_pair(TokenId left, TokenId right, std::int64_t delta, Node node) {
    const PairKey key = pair_key(left, right);
    std::uint64_t& count = pair_counts_[key];
    count += static_cast<std::uint64_t>(delta);  // wraps correctly for negative deltas
    changed_.insert(key);
    if (delta > 0) positions_[key].push_back(node);
  }

  void merge(PairKey pair) {
    const TokenId left = left_of(pair), right = right_of(pair);
    std::string bytes = tokens_[left] + tokens_[right];
    TokenId merged;
    if (const auto existing = id_of_.find(bytes); existing != id_of_.end()) {
      merged = existing->second;
    } else {
      merged = static_cast<TokenId>(tokens_.size());
      tokens_.push_back(bytes);
      id_of_.emplace(std::move(bytes), merged);
      merges_.push_back({left, right});
    }

    std::vector<Node> where = std::move(positions_[pair]);
    positions_.erase(pair);
    // Left to right within each word, as encoding merges: in "a a a", a+a merges the first two.
    std::sort(where.begin(), where.end());
    where.erase(std::unique(where.begin(), where.end()), where.end());
    for (Node node : where) merge_at(node, left, right, merged);
    for (PairKey key : changed_) {
      const std::uint64_t count = pair_counts_[key];
      if (count == 0) {
        pair_counts_.erase(key);
      } else {
        heap_.push({count, key});
      }
    }
    changed_.clear();
  }

  // Merges (left, right) at `node` into `merged`, unless the pair no longer
  // begins there. Only the pairs at the seams change: the pair before it and
  // the pair after it are replaced by pairs with the merged token.
  void merge_at(Node node, TokenId left, TokenId right, TokenId merged) {
    if (nodes_.token[node] != left) return;  // merged away, or rewritten, since it was listed
    const Node second = nodes_.next[node];
    if (second == no_node || nodes_.token[second] != right) return;
    const std::int64_t weight = static_cast<std::int64_t>(nodes_.weight[node]);
    const Node before = nodes_.previous[node], after = nodes_.next[second];
    if (before != no_node) {
      add_to_pair(nodes_.token[before], left, -weight, before);
      add_to_pair(nodes_.token[before], merged, weight, before);
    }
    if (after != no_node) {
      add_to_pair(right, nodes_.token[after], -weight, node);
      add_to_pair(merged, nodes_.token[after], weight, node);
      nodes_.previous[after] = node;
    }
    add_to_pair(left, right, -weight, node);
    nodes_.token[node] = merged;
    nodes_.token[second] = no_token;
    nodes_.next[node] = after;
  }

  BpeTrainingOptions options_;
  Nodes nodes_;
  std::vector<std::string> tokens_;  // id -> bytes
  std::unordered_map<std::string, TokenId> id_of_;
  std::vector<Merge> merges_;
  TokenId byte_ids_[256] = {};
  std::unordered_map<PairKey, std::uint64_t> pair_counts_;
  std::unordered_map<PairKey, std::vector<Node>> positions_;
  std::unordered_set<PairKey> changed_;
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, LowerPriority> heap_{LowerPriority{&tokens_}};
};

}  // namespace

BpeVocabulary train_bpe(std::string_view corpus, const BpeTrainingOptions& options) {
  if (options.vocab_size < 257) {
    throw TokenizerError("a byte-level BPE vocabulary needs at least 257 tokens (256 bytes and <|endoftext|>), got " +
                         std::to_string(options.vocab_size));
  }
  if (options.min_pair_count < 1) throw TokenizerError("min_pair_count must be at least 1");
  return Trainer(corpus, options).run();
}

}  // namespace tg::tokenizer
