#include "tinygpt/tokenizer/hf_bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <functional>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

// Pieces up to this many symbols merge by scanning, longer ones by heap.
constexpr std::size_t longest_scanned_word = 64;

// A merge as the file writes it: "a b" (older files) or ["a", "b"] (newer).
std::pair<std::string, std::string> merge_halves(const HfField& merge) {
  if (merge.node.is_array()) {
    if (merge.node.size() != 2) merge.fail("expected two tokens");
    return {merge.at(0).string(), merge.at(1).string()};
  }
  const std::string line = merge.string();
  const std::size_t space = line.find(' ');
  if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
    merge.fail("expected two tokens separated by one space, got '" + line + "'");
  return {line.substr(0, space), line.substr(space + 1)};
}

}  // namespace

HfBpeModel HfBpeModel::read(const HfField& field, bool byte_level) {
  const std::string type = field.type();
  if (type != "BPE") field.child("type").fail("the model '" + type + "' is not supported (only BPE is)");
  if (field.has("dropout") && !(field.child("dropout").node.is_number() && field.child("dropout").node.get<double>() == 0))
    field.child("dropout").fail("BPE dropout is random; only null is supported");

  HfBpeModel model;
  model.byte_level_ = byte_level;
  model.ignore_merges_ = field.boolean_or("ignore_merges", false);
  model.byte_fallback_ = field.boolean_or("byte_fallback", false);
  model.fuse_unk_ = field.boolean_or("fuse_unk", false);
  model.continuing_subword_prefix_ = field.string_or("continuing_subword_prefix", "");
  model.end_of_word_suffix_ = field.string_or("end_of_word_suffix", "");

  // The bytes of a token written as the file writes it.
  const auto bytes_of_text = [&](const std::string& text) {
    if (!byte_level) return text;
    std::optional<std::string> bytes = alphabet_text_to_bytes(text);
    return bytes ? *bytes : text;  // a token outside the alphabet (rare) stays as written
  };

  const HfField vocab = field.child("vocab");
  if (!vocab.node.is_object()) vocab.fail("expected an object of token -> id");
  std::vector<const std::string*> text_of_id;
  for (auto entry = vocab.node.begin(); entry != vocab.node.end(); ++entry) {
    const std::optional<uint32_t> id = json_integer<uint32_t>(entry.value());
    if (!id || *id >= hf_max_vocab_size) {
      vocab.fail("the id of '" + entry.key() + "' is not an integer in [0, " + std::to_string(hf_max_vocab_size) + ")");
    }
    if (*id >= text_of_id.size()) text_of_id.resize(*id + 1, nullptr);
    if (text_of_id[*id]) vocab.fail("ids must be distinct; '" + entry.key() + "' and '" + *text_of_id[*id] +
                                    "' share " + std::to_string(*id));
    text_of_id[*id] = &entry.key();
    ++model.token_count_;
  }
  model.present_.assign(text_of_id.size(), false);
  model.offsets_.reserve(text_of_id.size() + 1);
  for (std::size_t id = 0; id < text_of_id.size(); ++id) {
    model.offsets_.push_back(model.arena_.size());
    if (text_of_id[id]) model.arena_ += bytes_of_text(*text_of_id[id]), model.present_[id] = true;
  }
  model.offsets_.push_back(model.arena_.size());
  model.index_ = TokenIndex(text_of_id.size());
  for (std::size_t id = 0; id < text_of_id.size(); ++id) {
    const auto token = static_cast<TokenId>(id);
    if (model.present_[id] && model.find_bytes(model.token_bytes(token)) == no_token)
      model.index_.insert(token, [&](TokenId other) { return model.token_bytes(other); });
  }

  if (field.has("unk_token")) {
    const HfField unk = field.child("unk_token");
    const std::optional<TokenId> id = model.find_text(unk.string());
    if (!id) unk.fail("the unknown token '" + unk.string() + "' is not in model.vocab");
    model.unk_ = *id;
  }
  for (int byte = 0; byte < 256; ++byte) model.byte_tokens_[byte] = model.find_bytes(std::string(1, static_cast<char>(byte)));
  if (byte_level) model.continuing_subword_prefix_ = bytes_of_text(model.continuing_subword_prefix_);
  if (byte_level) model.end_of_word_suffix_ = bytes_of_text(model.end_of_word_suffix_);

  // Whether pieces may be cut before "▁" (see hf_bpe_model.h): "▁" is a token, no token has it after
  // another character, and no prefix or suffix makes a symbol depend on where its word starts or ends.
  const std::string metaspace = "\xE2\x96\x81";
  if (!byte_level && model.continuing_subword_prefix_.empty() && model.end_of_word_suffix_.empty() &&
      model.find_bytes(metaspace) != no_token) {
    bool cuttable = true;
    for (std::size_t id = 0; id < model.size() && cuttable; ++id) {
      const std::string_view token = model.present_[id] ? model.token_bytes(static_cast<TokenId>(id)) : "";
      std::size_t at = 0;
      while (token.compare(at, metaspace.size(), metaspace) == 0) at += metaspace.size();  // the leading run
      cuttable = token.find(metaspace, at) == std::string_view::npos;
    }
    if (cuttable) model.word_start_ = metaspace;
  }

  const HfField merges = field.child("merges");
  if (!merges.node.is_array()) merges.fail("expected a list");
  model.ranks_ = PairTable(merges.node.size());
  model.merged_.resize(merges.node.size());
  const std::size_t prefix_length = field.string_or("continuing_subword_prefix", "").size();
  for (std::size_t rank = 0; rank < merges.node.size(); ++rank) {
    const HfField merge = merges.at(rank);
    const auto [left, right] = merge_halves(merge);
    const std::optional<TokenId> left_id = model.find_text(left), right_id = model.find_text(right);
    if (!left_id) merge.fail("names '" + left + "', which is not in model.vocab");
    if (!right_id) merge.fail("names '" + right + "', which is not in model.vocab");
    const std::string joined = left + right.substr(std::min(prefix_length, right.size()));
    const std::optional<TokenId> merged = model.find_text(joined);
    if (!merged) merge.fail("makes '" + joined + "', which is not in model.vocab");
    model.ranks_.insert(*left_id, *right_id, static_cast<TokenId>(rank));
    model.merged_[rank] = *merged;
  }
  return model;
}

std::string HfBpeModel::token_text(TokenId id) const {
  const std::string_view bytes = token_bytes(id);
  return byte_level_ ? bytes_to_alphabet_text(bytes) : std::string(bytes);
}

std::optional<TokenId> HfBpeModel::find_text(std::string_view text) const {
  TokenId id = no_token;
  if (byte_level_) {
    if (const std::optional<std::string> bytes = alphabet_text_to_bytes(text)) id = find_bytes(*bytes);
  }
  if (id == no_token) id = find_bytes(text);
  return id == no_token ? std::nullopt : std::optional<TokenId>(id);
}

void HfBpeModel::initial_symbols(std::string_view piece, std::vector<TokenId>& symbols) const {
  const bool plain = continuing_subword_prefix_.empty() && end_of_word_suffix_.empty();
  TokenId pending_unk = no_token;  // an unknown run not yet added (fuse_unk joins consecutive ones)
  std::string unit;
  for (std::size_t at = 0; at < piece.size();) {
    const std::size_t length = byte_level_ ? 1 : decode_utf8_char(piece, at).length;
    TokenId id = no_token;
    if (plain && byte_level_) {
      id = byte_tokens_[static_cast<unsigned char>(piece[at])];
      unit.assign(piece.substr(at, 1));
    } else {
      unit.clear();
      if (at > 0) unit += continuing_subword_prefix_;
      unit.append(piece.substr(at, length));
      if (at + length == piece.size()) unit += end_of_word_suffix_;
      id = find_bytes(unit);
    }
    at += length;
    if (id != no_token) {
      if (pending_unk != no_token) symbols.push_back(std::exchange(pending_unk, no_token));
      symbols.push_back(id);
      continue;
    }
    if (byte_fallback_) {
      bool all_bytes = true;
      const std::size_t mark = symbols.size();
      for (unsigned char byte : unit) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned>(byte));
        const TokenId byte_id = find_bytes(name);
        if (byte_id == no_token) { all_bytes = false; break; }
        symbols.push_back(byte_id);
      }
      if (all_bytes) continue;
      symbols.resize(mark);
    }
    if (unk_ == no_token) continue;  // no unknown token: the character is dropped, as in the Rust library
    if (pending_unk != no_token && !fuse_unk_) symbols.push_back(pending_unk);
    pending_unk = unk_;
  }
  if (pending_unk != no_token) symbols.push_back(pending_unk);
}

void HfBpeModel::merge_by_scan(std::vector<TokenId>& symbols) const {
  TokenId ranks[longest_scanned_word];
  std::size_t count = symbols.size();
  TokenId* ids = symbols.data();
  for (std::size_t i = 0; i + 1 < count; ++i) ranks[i] = ranks_.find(ids[i], ids[i + 1]);
  ranks[count - 1] = no_token;
  while (count > 1) {
    std::size_t best = 0;
    for (std::size_t i = 1; i + 1 < count; ++i)
      if (ranks[i] < ranks[best]) best = i;  // strict: the leftmost wins ties
    if (ranks[best] == no_token) break;
    ids[best] = merged_[ranks[best]];
    for (std::size_t i = best + 1; i + 1 < count; ++i) ids[i] = ids[i + 1], ranks[i] = ranks[i + 1];
    --count;
    ranks[best] = best + 1 < count ? ranks_.find(ids[best], ids[best + 1]) : no_token;
    if (best > 0) ranks[best - 1] = ranks_.find(ids[best - 1], ids[best]);
  }
  symbols.resize(count);
}

void HfBpeModel::merge_by_heap(std::vector<TokenId>& symbols) const {
  // A doubly linked list over the symbols; a merge keeps the left one and unlinks the right.
  const auto count = static_cast<std::uint32_t>(symbols.size());
  constexpr std::uint32_t none = 0xFFFFFFFFu;
  std::vector<std::uint32_t> next(count), previous(count);
  for (std::uint32_t i = 0; i < count; ++i) next[i] = i + 1 < count ? i + 1 : none, previous[i] = i > 0 ? i - 1 : none;
  std::vector<bool> alive(count, true);
  struct Candidate {
    TokenId rank;
    std::uint32_t position;
    bool operator>(const Candidate& other) const {
      return rank != other.rank ? rank > other.rank : position > other.position;
    }
  };
  const auto rank_at = [&](std::uint32_t position) {
    return next[position] == none ? no_token : ranks_.find(symbols[position], symbols[next[position]]);
  };
  std::vector<Candidate> heap;  // a min-heap under std::greater; stale entries are skipped when popped
  for (std::uint32_t i = 0; i + 1 < count; ++i)
    if (const TokenId rank = rank_at(i); rank != no_token) heap.push_back({rank, i});
  std::make_heap(heap.begin(), heap.end(), std::greater<>());
  const auto consider = [&](std::uint32_t position) {
    if (const TokenId rank = rank_at(position); rank != no_token) {
      heap.push_back({rank, position});
      std::push_heap(heap.begin(), heap.end(), std::greater<>());
    }
  };
  while (!heap.empty()) {
    std::pop_heap(heap.begin(), heap.end(), std::greater<>());
    const Candidate candidate = heap.back();
    heap.pop_back();
    const std::uint32_t position = candidate.position;
    if (!alive[position] || rank_at(position) != candidate.rank) continue;
    const std::uint32_t right = next[position];
    symbols[position] = merged_[candidate.rank];
    alive[right] = false;
    next[position] = next[right];
    if (next[right] != none) previous[next[right]] = position;
    if (previous[position] != none) consider(previous[position]);
    consider(position);
  }
  std::uint32_t kept = 0;
  for (std::uint32_t i = 0; i < count; i = next[i]) symbols[kept++] = symbols[i];
  symbols.resize(kept);
}

void HfBpeModel::encode_piece(std::string_view piece, std::vector<TokenId>& out) const {
  if (ignore_merges_) {
    if (const TokenId whole = find_bytes(piece); whole != no_token) {
      out.push_back(whole);
      return;
    }
  }
  if (word_start_.empty()) {
    encode_word(piece, out);
    return;
  }
  // Cut before each "▁" that follows another character.
  std::size_t start = 0;
  for (std::size_t found = piece.find(word_start_, 1); found != std::string_view::npos;
       found = piece.find(word_start_, found + word_start_.size())) {
    if (piece.compare(found - word_start_.size(), word_start_.size(), word_start_) == 0) continue;
    if (found > start) encode_word(piece.substr(start, found - start), out);
    start = found;
  }
  encode_word(piece.substr(start), out);
}

void HfBpeModel::encode_word(std::string_view piece, std::vector<TokenId>& out) const {
  thread_local std::vector<TokenId> symbols;
  symbols.clear();
  initial_symbols(piece, symbols);
  if (symbols.size() > 1) symbols.size() <= longest_scanned_word ? merge_by_scan(symbols) : merge_by_heap(symbols);
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace tg::tokenizer
