#include "tinygpt/tokenizer/text_tokenizer.h"

#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

template <class... Handlers>
struct Overloaded : Handlers... {
  using Handlers::operator()...;
};
// C++20 deduces this for an aggregate, but clang only from version 17 (the fuzz build uses clang 14).
template <class... Handlers>
Overloaded(Handlers...) -> Overloaded<Handlers...>;

std::vector<TokenId> to_token_ids(std::span<const int64_t> ids) {
  std::vector<TokenId> token_ids(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    // Negative or huge ids become no_token, which every decoder rejects by name.
    token_ids[i] = ids[i] >= 0 && ids[i] < int64_t{no_token} ? static_cast<TokenId>(ids[i]) : no_token;
  }
  return token_ids;
}

// The bytes a lead byte announces (2..4), or 0 when it does not start a multi-byte character.
std::size_t announced_length(unsigned char lead) {
  if (lead >= 0xC2 && lead <= 0xDF) return 2;
  if (lead >= 0xE0 && lead <= 0xEF) return 3;
  if (lead >= 0xF0 && lead <= 0xF4) return 4;
  return 0;
}

bool is_continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

// True when text[offset..] is the beginning of a character whose remaining bytes have not come yet.
bool is_unfinished_character(std::string_view text, std::size_t offset) {
  const std::size_t length = announced_length(static_cast<unsigned char>(text[offset]));
  if (length == 0 || offset + length <= text.size()) return false;
  for (std::size_t i = offset + 1; i < text.size(); ++i) {
    if (!is_continuation(static_cast<unsigned char>(text[i]))) return false;
  }
  return true;
}

}  // namespace

const char* TextTokenizer::kind() const {
  return std::visit(Overloaded{[](const CharTokenizer&) { return "char"; }, [](const Gpt2Tokenizer&) { return "gpt2"; },
                               [](const HfTokenizer&) { return "hf"; }},
                    tokenizer_);
}

namespace {

// A char-level vocabulary's "special_tokens": an array of at most kMaxCharSpecialTokens strings
// (the CharTokenizer checks each). Throws TokenizerError naming what is wrong.
std::vector<std::string> special_tokens_from_json(const nlohmann::json& json) {
  const auto field = json.find("special_tokens");
  if (field == json.end()) return {};
  if (!field->is_array()) throw TokenizerError("the tokenizer's \"special_tokens\" must be an array of strings");
  if (field->size() > kMaxCharSpecialTokens) {
    throw TokenizerError("the tokenizer's \"special_tokens\" holds " + std::to_string(field->size()) +
                         " entries; a char-level vocabulary holds at most " + std::to_string(kMaxCharSpecialTokens));
  }
  std::vector<std::string> tokens;
  for (const nlohmann::json& token : *field) {
    if (!token.is_string()) {
      throw TokenizerError("the tokenizer's \"special_tokens\" must be an array of strings, but entry " +
                           std::to_string(tokens.size()) + " is " + token.type_name());
    }
    tokens.push_back(token.get<std::string>());
  }
  return tokens;
}

}  // namespace

nlohmann::json TextTokenizer::to_json() const {
  if (const auto* characters = as_char()) {
    nlohmann::json json = {{"type", "char"}, {"characters", characters->serialize()}};
    if (!characters->special_tokens().empty()) json["special_tokens"] = characters->special_tokens();
    return json;
  }
  if (const auto* hf = as_hf()) {
    nlohmann::json json = {{"type", "hf"}, {hf_tokenizer_file_name, hf->tokenizer_json()}};
    if (hf->tokenizer_config_json()) json[hf_tokenizer_config_file_name] = *hf->tokenizer_config_json();
    return json;
  }
  const Gpt2VocabularyTexts texts = gpt2_vocabulary_texts(std::get<Gpt2Tokenizer>(tokenizer_).vocabulary());
  return {{"type", "bpe"}, {encoder_file_name, texts.encoder_json}, {merges_file_name, texts.vocab_bpe}};
}

TextTokenizer TextTokenizer::from_json(const nlohmann::json& json) {
  const auto text_field = [&](const char* key) -> std::string {
    const auto field = json.is_object() ? json.find(key) : json.end();
    if (field == json.end() || !field->is_string())
      throw TokenizerError(std::string("the tokenizer has no text field '") + key + "'");
    return field->get<std::string>();
  };
  const std::string type = text_field("type");
  if (type == "char") return TextTokenizer(CharTokenizer::deserialize(text_field("characters"), special_tokens_from_json(json)));
  if (type == "bpe") {
    return TextTokenizer(Gpt2Tokenizer(parse_gpt2_vocabulary({text_field(encoder_file_name), text_field(merges_file_name)},
                                                             encoder_file_name, merges_file_name)));
  }
  if (type == "hf") {
    std::optional<std::string> config;
    if (json.contains(hf_tokenizer_config_file_name)) config = text_field(hf_tokenizer_config_file_name);
    return TextTokenizer(HfTokenizer::from_texts(text_field(hf_tokenizer_file_name), std::move(config),
                                                 "the checkpoint's tokenizer.json"));
  }
  throw TokenizerError("unknown tokenizer type '" + type + "' (expected 'char', 'bpe' or 'hf')");
}

namespace {

std::optional<int64_t> widened(std::optional<TokenId> id) {
  return id ? std::optional<int64_t>(*id) : std::nullopt;
}

}  // namespace

std::optional<int64_t> TextTokenizer::end_of_text_id() const {
  if (const auto* hf = as_hf()) return widened(hf->eos_id());
  const auto* gpt2 = as_bpe();
  return gpt2 ? widened(gpt2->special_token("<|endoftext|>")) : std::nullopt;
}

std::optional<int64_t> TextTokenizer::bos_id() const {
  const auto* hf = as_hf();
  return hf ? widened(hf->bos_id()) : std::nullopt;
}

std::optional<std::string> TextTokenizer::bos_token() const {
  const auto* hf = as_hf();
  return hf ? hf->bos_token() : std::nullopt;
}

std::optional<std::string> TextTokenizer::eos_token() const {
  if (const auto* hf = as_hf()) return hf->eos_token();
  return end_of_text_id() ? std::optional<std::string>("<|endoftext|>") : std::nullopt;
}

std::optional<int64_t> TextTokenizer::token_id(std::string_view text) const {
  if (const auto* hf = as_hf()) return widened(hf->token_id(text));
  if (const auto* characters = as_char()) return widened(characters->special_token_id(text));
  const auto* gpt2 = as_bpe();
  return gpt2 ? widened(gpt2->special_token(text)) : std::nullopt;
}

int64_t TextTokenizer::vocab_size() const {
  return std::visit([](const auto& tokenizer) { return static_cast<int64_t>(tokenizer.vocab_size()); }, tokenizer_);
}

std::vector<int64_t> TextTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  const std::vector<TokenId> ids =
      std::visit(Overloaded{[&](const CharTokenizer& tokenizer) { return tokenizer.encode(text); },
                            [&](const Gpt2Tokenizer& tokenizer) {
                              return tokenizer.encode(text, SpecialTokens::recognised);
                            },
                            [&](const HfTokenizer& tokenizer) { return tokenizer.encode(text, add_special_tokens); }},
                 tokenizer_);
  return std::vector<int64_t>(ids.begin(), ids.end());
}

std::string TextTokenizer::decode(std::span<const int64_t> ids, bool skip_special_tokens) const {
  const std::vector<TokenId> token_ids = to_token_ids(ids);
  return std::visit(Overloaded{[&](const HfTokenizer& tokenizer) { return tokenizer.decode(token_ids, skip_special_tokens); },
                               [&](const CharTokenizer& tokenizer) { return tokenizer.decode(token_ids, skip_special_tokens); },
                               [&](const Gpt2Tokenizer& tokenizer) { return tokenizer.decode(token_ids); }},
                    tokenizer_);
}

std::string TextTokenizer::continuation_bytes(int64_t id) const {
  const std::string alone = decode(std::span<const int64_t>(&id, 1));
  if (!as_hf()) return alone;
  // A decoder's rules for the start of a text (Strip, Metaspace) apply to the first token only: the
  // token after itself shows what it adds anywhere else.
  const int64_t twice[2] = {id, id};
  const std::string both = decode(twice);
  return both.size() >= alone.size() && both.compare(0, alone.size(), alone) == 0 ? both.substr(alone.size()) : alone;
}

std::string TextTokenizer::display(int64_t id) const {
  std::string bytes;
  try {
    bytes = continuation_bytes(id);
  } catch (const DecodeError&) {  // a row of the model's table past the tokenizer (Qwen pads 267 of them)
    return "<no token " + std::to_string(id) + ">";
  }
  std::string shown;
  for (std::size_t offset = 0; offset < bytes.size();) {
    const Utf8Char character = decode_utf8_char(bytes, offset);
    if (!character.valid) {
      char label[8];
      std::snprintf(label, sizeof label, "<0x%02X>", static_cast<unsigned>(static_cast<unsigned char>(bytes[offset])));
      shown += label;
    } else if (character.code_point == '\n') {
      shown += "\\n";
    } else if (character.code_point == '\t') {
      shown += "\\t";
    } else if (character.code_point == '\r') {
      shown += "\\r";
    } else if (character.code_point < 0x20 || character.code_point == 0x7F) {
      char label[8];
      std::snprintf(label, sizeof label, "\\x%02X", static_cast<unsigned>(character.code_point));
      shown += label;
    } else {
      shown.append(bytes, offset, character.length);
    }
    offset += character.length;
  }
  return shown;
}

TextTokenizer load_tokenizer_directory(const std::filesystem::path& directory) {
  if (has_hf_tokenizer(directory)) return TextTokenizer(HfTokenizer::load(directory));
  return TextTokenizer(Gpt2Tokenizer::load(directory));
}

std::string StreamingDecoder::push(int64_t id) {
  pending_ += printed_any_ ? tokenizer_.continuation_bytes(id) : tokenizer_.decode(std::span<const int64_t>(&id, 1));
  printed_any_ = true;
  std::size_t complete = 0;  // pending_[0, complete) can be printed
  while (complete < pending_.size()) {
    if (is_unfinished_character(pending_, complete)) break;
    complete += decode_utf8_char(pending_, complete).length;
  }
  std::string ready = pending_.substr(0, complete);
  pending_.erase(0, complete);
  return ready;
}

std::string StreamingDecoder::finish() { return std::exchange(pending_, {}); }

}  // namespace tg::tokenizer
