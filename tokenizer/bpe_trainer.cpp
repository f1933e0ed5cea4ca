// The BPE training loop of bpe_trainer.h.
//
// Data: each distinct word holds its current tokens; pair_counts holds, for
// every adjacent pair, the number of times it occurs in the corpus; words_with
// lists the words in which a pair may occur (entries may be stale, and are
// checked when used). A max-heap of (count, pair) finds the next merge; an
// entry whose count is no longer current is skipped, because a fresh entry was
// pushed when the count changed.
#include "tokenizer/bpe_trainer.h"

#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "tokenizer/byte_alphabet.h"
#include "tokenizer/errors.h"
#include "tokenizer/gpt2_pretokenizer.h"

namespace tg::tokenizer {

namespace {

using PairKey = std::uint64_t;

PairKey pair_key(TokenId left, TokenId right) { return static_cast<PairKey>(left) << 32 | right; }
TokenId left_of(PairKey key) { return static_cast<TokenId>(key >> 32); }
TokenId right_of(PairKey key) { return static_cast<TokenId>(key); }

struct Word {
  std::vector<TokenId> tokens;
  std::uint64_t count;
  std::size_t last_merge = 0;  // the merge step that last rewrote it (1-based)
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
    std::size_t step = 0;
    while (tokens_.size() < target_tokens) {
      const std::optional<PairKey> best = pop_best_pair();
      if (!best) break;
      merge(*best, ++step);
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
    words_.reserve(piece_counts.size());
    for (const auto& [piece, count] : piece_counts) {
      Word word{{}, count};
      word.tokens.reserve(piece.size());
      for (char byte : piece) word.tokens.push_back(byte_ids_[static_cast<std::uint8_t>(byte)]);
      words_.push_back(std::move(word));
    }
  }

  void count_pairs() {
    for (std::uint32_t w = 0; w < words_.size(); ++w) {
      const Word& word = words_[w];
      for (std::size_t i = 0; i + 1 < word.tokens.size(); ++i) {
        const PairKey key = pair_key(word.tokens[i], word.tokens[i + 1]);
        pair_counts_[key] += word.count;
        std::vector<std::uint32_t>& where = words_with_[key];
        if (where.empty() || where.back() != w) where.push_back(w);
      }
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

  void add_to_pair(TokenId left, TokenId right, std::int64_t delta, std::uint32_t word) {
    const PairKey key = pair_key(left, right);
    std::uint64_t& count = pair_counts_[key];
    count += static_cast<std::uint64_t>(delta);  // wraps correctly for negative deltas
    changed_.insert(key);
    if (delta > 0) words_with_[key].push_back(word);
  }

  void merge(PairKey pair, std::size_t step) {
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

    const std::vector<std::uint32_t> where = std::move(words_with_[pair]);
    words_with_.erase(pair);
    for (std::uint32_t w : where) {
      Word& word = words_[w];
      if (word.last_merge == step) continue;  // listed twice
      word.last_merge = step;
      merge_in_word(word, w, left, right, merged);
    }
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

  // Rewrites one word left to right, merging each (left, right) occurrence
  // into `merged`. Only the pairs at the seams change: for each output token
  // next to a merged one, the old pair across that seam is removed and the
  // new one added; each merged occurrence also removes one (left, right).
  void merge_in_word(Word& word, std::uint32_t w, TokenId left, TokenId right, TokenId merged) {
    const std::int64_t count = static_cast<std::int64_t>(word.count);
    std::vector<TokenId>& tokens = word.tokens;
    std::size_t out = 0;
    bool previous_was_merged = false;
    TokenId previous_old_last = no_token;  // the old token at the previous output's right edge
    for (std::size_t i = 0; i < tokens.size();) {
      const bool is_merge = i + 1 < tokens.size() && tokens[i] == left && tokens[i + 1] == right;
      const TokenId output = is_merge ? merged : tokens[i];
      const TokenId old_first = tokens[i];
      const TokenId old_last = is_merge ? right : tokens[i];
      if (is_merge) add_to_pair(left, right, -count, w);
      if (out > 0 && (is_merge || previous_was_merged)) {
        add_to_pair(previous_old_last, old_first, -count, w);
        add_to_pair(tokens[out - 1], output, count, w);
      }
      tokens[out++] = output;
      previous_was_merged = is_merge;
      previous_old_last = old_last;
      i += is_merge ? 2 : 1;
    }
    tokens.resize(out);
  }

  BpeTrainingOptions options_;
  std::vector<Word> words_;
  std::vector<std::string> tokens_;  // id -> bytes
  std::unordered_map<std::string, TokenId> id_of_;
  std::vector<Merge> merges_;
  TokenId byte_ids_[256] = {};
  std::unordered_map<PairKey, std::uint64_t> pair_counts_;
  std::unordered_map<PairKey, std::vector<std::uint32_t>> words_with_;
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
