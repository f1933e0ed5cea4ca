// Gpt2Tokenizer: the pre-tokeniser and the merge loop put together, plus the
// handling of special tokens.
#include "tinygpt/tokenizer/gpt2_tokenizer.h"

#include "tinygpt/tokenizer/bpe_merge.h"
#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"

namespace tg::tokenizer {

Gpt2Tokenizer Gpt2Tokenizer::load(const std::filesystem::path& directory) {
  return Gpt2Tokenizer(read_gpt2_vocabulary(directory));
}

void Gpt2Tokenizer::save(const std::filesystem::path& directory) const { write_gpt2_vocabulary(vocabulary_, directory); }

std::vector<TokenId> Gpt2Tokenizer::encode(std::string_view text, SpecialTokens specials) const {
  std::vector<TokenId> ids;
  // English text averages a little over 4 bytes per token.
  ids.reserve(text.size() / 4 + 16);
  encode_into(text, ids, specials);
  return ids;
}

void Gpt2Tokenizer::encode_ordinary(std::string_view text, std::vector<TokenId>& ids) const {
  Gpt2PieceScanner scanner(text);
  for (std::string_view piece = scanner.next(); !piece.empty(); piece = scanner.next()) {
    encode_piece(vocabulary_, piece, ids);
  }
}

void Gpt2Tokenizer::encode_into(std::string_view text, std::vector<TokenId>& ids, SpecialTokens specials) const {
  if (specials == SpecialTokens::as_text || vocabulary_.special_ids().empty()) {
    encode_ordinary(text, ids);
    return;
  }
  // Cut the text at each special token (the earliest; the longest if two start
  // at the same byte) and encode the ordinary text between them.
  while (!text.empty()) {
    std::size_t best_position = std::string_view::npos;
    TokenId best_id = no_token;
    for (TokenId id : vocabulary_.special_ids()) {
      const std::string_view special = vocabulary_.token_bytes(id);
      const std::size_t position = text.find(special);
      if (position == std::string_view::npos) continue;
      if (position < best_position ||
          (position == best_position && special.size() > vocabulary_.token_bytes(best_id).size())) {
        best_position = position, best_id = id;
      }
    }
    if (best_id == no_token) break;
    encode_ordinary(text.substr(0, best_position), ids);
    ids.push_back(best_id);
    text.remove_prefix(best_position + vocabulary_.token_bytes(best_id).size());
  }
  encode_ordinary(text, ids);
}

std::string Gpt2Tokenizer::decode(std::span<const TokenId> ids) const {
  std::string bytes;
  bytes.reserve(ids.size() * 4);
  for (std::size_t position = 0; position < ids.size(); ++position) {
    const TokenId id = ids[position];
    if (id >= vocabulary_.size()) {
      throw DecodeError("cannot decode id " + std::to_string(id) + " at position " + std::to_string(position) +
                        ": the vocabulary has ids 0.." + std::to_string(vocabulary_.size() - 1));
    }
    bytes += vocabulary_.token_bytes(id);
  }
  return bytes;
}

std::string Gpt2Tokenizer::token_text(TokenId id) const {
  if (id >= vocabulary_.size()) {
    throw DecodeError("id " + std::to_string(id) + " is outside the vocabulary of " +
                      std::to_string(vocabulary_.size()) + " tokens");
  }
  const std::string_view bytes = vocabulary_.token_bytes(id);
  return vocabulary_.is_special(id) ? std::string(bytes) : bytes_to_alphabet_text(bytes);
}

std::optional<TokenId> Gpt2Tokenizer::special_token(std::string_view text) const {
  for (TokenId id : vocabulary_.special_ids()) {
    if (vocabulary_.token_bytes(id) == text) return id;
  }
  return std::nullopt;
}

}  // namespace tg::tokenizer
