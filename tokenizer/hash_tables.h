// Two open-addressing hash tables behind the BPE vocabulary, on the hot path
// of every encode: byte string -> token id, and (token, token) -> merged token.
//
// Both use linear probing in a power-of-two array at most half full, so a
// look-up is a hash, a mask and usually one comparison. They hold ids and
// offsets, never pointers, so the vocabulary that owns them copies safely.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/token_id.h"

namespace tg::tokenizer {

// A fast, non-cryptographic hash of a short byte string: 8 bytes at a time,
// each folded in by a multiply and a rotate (in the spirit of FxHash).
inline std::uint64_t hash_bytes(std::string_view bytes) {
  constexpr std::uint64_t multiplier = 0x9E3779B97F4A7C15ull;
  std::uint64_t hash = bytes.size() * multiplier;
  const char* data = bytes.data();
  std::size_t left = bytes.size();
  while (left >= 8) {
    std::uint64_t word;
    std::memcpy(&word, data, 8);
    hash = ((hash << 5 | hash >> 59) ^ word) * multiplier;
    data += 8, left -= 8;
  }
  if (left > 0) {
    std::uint64_t word = 0;
    std::memcpy(&word, data, left);
    hash = ((hash << 5 | hash >> 59) ^ word) * multiplier;
  }
  return hash ^ (hash >> 29);
}

inline std::size_t table_capacity_for(std::size_t entries) {
  std::size_t capacity = 16;
  while (capacity < entries * 2) capacity *= 2;
  return capacity;
}

// Maps the byte strings of a fixed set of tokens to their ids. The bytes live
// with the caller; `bytes_of(id)` must return them for every id inserted.
class TokenIndex {
 public:
  TokenIndex() = default;
  explicit TokenIndex(std::size_t expected_entries)
      : slots_(table_capacity_for(expected_entries), no_token), mask_(slots_.size() - 1) {}

  // Inserts an id whose bytes are not yet present.
  template <typename BytesOf>
  void insert(TokenId id, const BytesOf& bytes_of) {
    std::size_t slot = hash_bytes(bytes_of(id)) & mask_;
    while (slots_[slot] != no_token) slot = (slot + 1) & mask_;
    slots_[slot] = id;
  }

  template <typename BytesOf>
  TokenId find(std::string_view bytes, const BytesOf& bytes_of) const {
    if (slots_.empty()) return no_token;
    for (std::size_t slot = hash_bytes(bytes) & mask_;; slot = (slot + 1) & mask_) {
      const TokenId id = slots_[slot];
      if (id == no_token || bytes_of(id) == bytes) return id;
    }
  }

 private:
  std::vector<TokenId> slots_;
  std::size_t mask_ = 0;
};

// Maps a pair of adjacent tokens to the token they merge into.
class PairTable {
 public:
  PairTable() = default;
  explicit PairTable(std::size_t expected_entries)
      : entries_(table_capacity_for(expected_entries), Entry{empty_key, no_token}),
        shift_(64 - std::countr_zero(entries_.size())) {}

  void insert(TokenId left, TokenId right, TokenId merged) {
    const std::uint64_t key = key_of(left, right);
    std::size_t slot = slot_of(key);
    while (entries_[slot].key != empty_key && entries_[slot].key != key) slot = (slot + 1) & mask();
    entries_[slot] = {key, merged};
  }

  // The merged token, or no_token if the pair does not merge.
  TokenId find(TokenId left, TokenId right) const {
    if (entries_.empty()) return no_token;
    const std::uint64_t key = key_of(left, right);
    for (std::size_t slot = slot_of(key);; slot = (slot + 1) & mask()) {
      const Entry& entry = entries_[slot];
      if (entry.key == key) return entry.merged;
      if (entry.key == empty_key) return no_token;
    }
  }

 private:
  struct Entry {
    std::uint64_t key;
    TokenId merged;
  };
  static constexpr std::uint64_t empty_key = ~0ull;  // (no_token, no_token): never a real pair

  static std::uint64_t key_of(TokenId left, TokenId right) {
    return static_cast<std::uint64_t>(left) << 32 | right;
  }
  // Fibonacci hashing: the top bits of key * 2^64/phi spread consecutive ids.
  std::size_t slot_of(std::uint64_t key) const { return (key * 0x9E3779B97F4A7C15ull) >> shift_; }
  std::size_t mask() const { return entries_.size() - 1; }

  std::vector<Entry> entries_;
  int shift_ = 64;
};

}  // namespace tg::tokenizer
