#include "tinygpt/tokenizer/hf_tokenizer.h"

#include <fstream>
#include <sstream>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/hf_added_tokens.h"
#include "tinygpt/tokenizer/hf_bpe_model.h"
#include "tinygpt/tokenizer/hf_decoders.h"
#include "tinygpt/tokenizer/hf_normalizers.h"
#include "tinygpt/tokenizer/hf_pre_tokenizers.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

struct HfTokenizer::Impl {
  std::string json_text;
  std::optional<std::string> config_text;
  HfNormalizer normalizer;
  HfPreTokenizer pre_tokenizer;
  HfBpeModel model;
  HfDecoder decoder;
  std::vector<HfAddedToken> added;                        // every added token, in file order
  std::unordered_map<std::string, std::size_t> added_by_content;
  std::unordered_map<TokenId, std::size_t> added_by_id;
  std::vector<std::string> added_bytes;                   // byte-level: what each decodes to
  HfAddedTokenMatcher raw_matcher;         // tokens with normalized false: found in the raw text
  HfAddedTokenMatcher normalized_matcher;  // normalized true: found in the normalized text
  std::vector<TokenId> prefix, suffix;     // the post-processor's, for add_special_tokens
  std::size_t vocab_size = 0;
  std::optional<std::string> bos_token, eos_token;
  bool add_bos_token = false;

  void encode_text(std::string_view text, bool at_text_start, std::vector<TokenId>& ids) const;
  void encode_normalized(std::string_view text, bool at_text_start, std::vector<TokenId>& ids) const;
  const HfAddedToken* added_token(TokenId id) const {
    const auto found = added_by_id.find(id);
    return found == added_by_id.end() ? nullptr : &added[found->second];
  }
};

namespace {

std::string read_file_bounded(const std::filesystem::path& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw TokenizerFileError(path.string() + ": cannot be read (" + error.message() + ")");
  if (size > hf_max_tokenizer_file_bytes) {
    throw TokenizerFileError(path.string() + ": " + std::to_string(size) + " bytes, more than the " +
                             std::to_string(hf_max_tokenizer_file_bytes >> 20) + " MiB a tokenizer file may have");
  }
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw TokenizerFileError(path.string() + ": cannot be read");
  return std::move(text).str();
}

nlohmann::json parse_file_json(std::string_view text, const std::string& name) {
  if (text.size() > hf_max_tokenizer_file_bytes)
    throw TokenizerFileError(name + ": " + std::to_string(text.size()) + " bytes, more than a tokenizer file may have");
  try {
    return parse_bounded_json(text, name);
  } catch (const nlohmann::json::exception& error) {
    throw TokenizerFileError(name + ": not JSON (" + json_error_text(error) + ")");
  } catch (const TokenizerError&) {
    throw;
  } catch (const Error& error) {
    throw TokenizerFileError(error.what());
  }
}

// Text that is valid UTF-8, or a copy in `repaired` with each bad byte as U+FFFD.
std::string_view valid_utf8(std::string_view text, std::string& repaired) {
  std::size_t at = 0;
  while (at < text.size()) {
    if (static_cast<unsigned char>(text[at]) < 0x80) {
      ++at;
      continue;
    }
    const Utf8Char character = decode_utf8_char(text, at);
    if (!character.valid) break;
    at += character.length;
  }
  if (at == text.size()) return text;
  repaired.assign(text.substr(0, at));
  while (at < text.size()) {
    const Utf8Char character = decode_utf8_char(text, at);
    if (character.valid) repaired.append(text.substr(at, character.length));
    else repaired += "\xEF\xBF\xBD";
    at += character.length;
  }
  return repaired;
}

TokenId read_id(const HfField& field, std::size_t limit) {
  const std::optional<TokenId> id = json_integer<TokenId>(field.node);
  if (!id || *id >= limit) field.fail("expected an id in [0, " + std::to_string(limit) + ")");
  return *id;
}

void read_post_processor(const HfField& field, std::vector<TokenId>& prefix, std::vector<TokenId>& suffix) {
  if (field.node.is_null()) return;
  const std::string type = field.type();
  if (type == "ByteLevel") return;  // it moves offsets only, which we do not keep
  if (type == "Sequence") {
    const HfField list = field.child("processors");
    if (!list.node.is_array()) list.fail("expected a list");
    for (std::size_t i = 0; i < list.node.size(); ++i) read_post_processor(list.at(i), prefix, suffix);
    return;
  }
  if (type == "TemplateProcessing") {
    const HfField single = field.child("single");
    const HfField specials = field.child("special_tokens");
    if (!single.node.is_array()) single.fail("expected a list");
    bool seen_sequence = false;
    for (std::size_t i = 0; i < single.node.size(); ++i) {
      const HfField item = single.at(i);
      if (item.has("Sequence")) {
        if (seen_sequence) item.fail("a second sequence in a single-sequence template");
        seen_sequence = true;
        continue;
      }
      const std::string name = item.child("SpecialToken").child("id").string();
      if (!specials.has(name.c_str())) item.fail("names '" + name + "', which is not in special_tokens");
      const HfField ids = specials.child(name.c_str()).child("ids");
      if (!ids.node.is_array()) ids.fail("expected a list");
      for (std::size_t j = 0; j < ids.node.size(); ++j)
        (seen_sequence ? suffix : prefix).push_back(read_id(ids.at(j), hf_max_vocab_size));
    }
    if (!seen_sequence) single.fail("has no {\"Sequence\": ...}");
    return;
  }
  if (type == "BertProcessing" || type == "RobertaProcessing") {
    prefix.push_back(read_id(field.child("cls").at(1), hf_max_vocab_size));
    suffix.push_back(read_id(field.child("sep").at(1), hf_max_vocab_size));
    return;
  }
  field.child("type").fail("the post-processor '" + type +
                           "' is not supported (TemplateProcessing, ByteLevel, BertProcessing, RobertaProcessing "
                           "and Sequence are)");
}

// A token name in tokenizer_config.json: "<s>", {"content": "<s>", ...} or null.
std::optional<std::string> config_token(const HfField& config, const char* key) {
  if (!config.has(key)) return std::nullopt;
  const HfField field = config.child(key);
  if (field.node.is_object()) return field.child("content").string();
  return field.string();
}

}  // namespace

bool has_hf_tokenizer(const std::filesystem::path& directory) {
  std::error_code error;
  return std::filesystem::is_regular_file(directory / hf_tokenizer_file_name, error);
}

HfTokenizer HfTokenizer::load(const std::filesystem::path& directory) {
  const std::filesystem::path json_path = directory / hf_tokenizer_file_name;
  const std::filesystem::path config_path = directory / hf_tokenizer_config_file_name;
  std::error_code error;
  if (!std::filesystem::is_regular_file(json_path, error))
    throw TokenizerFileError(json_path.string() + ": not found (a Hugging Face tokenizer directory holds tokenizer.json)");
  std::optional<std::string> config;
  if (std::filesystem::is_regular_file(config_path, error)) config = read_file_bounded(config_path);
  return from_texts(read_file_bounded(json_path), std::move(config), json_path.string());
}

HfTokenizer HfTokenizer::from_texts(std::string tokenizer_json, std::optional<std::string> tokenizer_config_json,
                                    const std::string& source) {
  auto impl = std::make_shared<Impl>();
  const nlohmann::json root_json = parse_file_json(tokenizer_json, source);
  const HfField root{root_json, "", source};
  if (!root_json.is_object()) root.fail("expected an object");

  impl->normalizer = root.has("normalizer") ? HfNormalizer::read(root.child("normalizer")) : HfNormalizer();
  impl->pre_tokenizer = root.has("pre_tokenizer") ? HfPreTokenizer::read(root.child("pre_tokenizer")) : HfPreTokenizer();
  impl->model = HfBpeModel::read(root.child("model"), impl->pre_tokenizer.byte_level());
  impl->decoder = root.has("decoder") ? HfDecoder::read(root.child("decoder")) : HfDecoder();
  impl->vocab_size = impl->model.size();

  if (root.has("added_tokens")) {
    const HfField list = root.child("added_tokens");
    if (!list.node.is_array()) list.fail("expected a list");
    for (std::size_t i = 0; i < list.node.size(); ++i) {
      const HfField entry = list.at(i);
      HfAddedToken token;
      read_id(entry.child("id"), hf_max_vocab_size);
      token.content = entry.child("content").string();
      if (token.content.empty()) entry.child("content").fail("an added token may not be empty");
      std::string repaired;
      if (valid_utf8(token.content, repaired).size() != token.content.size() || !repaired.empty())
        entry.child("content").fail("not valid UTF-8");
      token.special = entry.boolean_or("special", false);
      token.single_word = entry.boolean_or("single_word", false);
      token.lstrip = entry.boolean_or("lstrip", false);
      token.rstrip = entry.boolean_or("rstrip", false);
      token.normalized = entry.boolean_or("normalized", !token.special);
      if (impl->added_by_content.count(token.content)) entry.child("content").fail("'" + token.content + "' is added twice");
      // The id is the Rust library's, whatever the file says (it only warns): a token of the model's
      // vocabulary keeps its id there, a new one comes after the vocabulary and the added tokens so far.
      if (const std::optional<TokenId> in_vocab = impl->model.find_text(token.content)) {
        token.id = *in_vocab;
      } else {
        const std::size_t model_tokens = impl->model.token_count();
        token.id = static_cast<TokenId>(model_tokens);
        for (const HfAddedToken& earlier : impl->added)
          if (earlier.id >= model_tokens) token.id = std::max(token.id, earlier.id + 1);
      }
      impl->added_by_content.emplace(token.content, impl->added.size());
      impl->added_by_id[token.id] = impl->added.size();
      impl->vocab_size = std::max<std::size_t>(impl->vocab_size, token.id + std::size_t{1});
      impl->added.push_back(std::move(token));
    }
  }
  std::vector<HfAddedToken> raw, normalized;
  for (const HfAddedToken& token : impl->added) {
    if (!token.normalized) {
      raw.push_back(token);
      continue;
    }
    HfAddedToken copy = token;
    impl->normalizer.normalize(copy.content);
    if (!copy.content.empty()) normalized.push_back(std::move(copy));
  }
  impl->raw_matcher = HfAddedTokenMatcher(std::move(raw));
  impl->normalized_matcher = HfAddedTokenMatcher(std::move(normalized));
  for (const HfAddedToken& token : impl->added) {
    const std::optional<std::string> bytes = alphabet_text_to_bytes(token.content);
    impl->added_bytes.push_back(bytes ? *bytes : token.content);  // as the ByteLevel decoder reads it
  }

  if (root.has("post_processor"))
    read_post_processor(root.child("post_processor"), impl->prefix, impl->suffix);
  for (const TokenId id : impl->prefix)
    if (id >= impl->vocab_size) root.child("post_processor").fail("adds the id " + std::to_string(id) + ", beyond the vocabulary");
  for (const TokenId id : impl->suffix)
    if (id >= impl->vocab_size) root.child("post_processor").fail("adds the id " + std::to_string(id) + ", beyond the vocabulary");

  if (tokenizer_config_json) {
    const std::filesystem::path source_path(source);
    const std::string config_name =
        source_path.has_parent_path() ? (source_path.parent_path() / hf_tokenizer_config_file_name).string()
                                      : hf_tokenizer_config_file_name;
    const nlohmann::json config_json = parse_file_json(*tokenizer_config_json, config_name);
    const HfField config{config_json, "", config_name};
    if (!config_json.is_object()) config.fail("expected an object");
    impl->bos_token = config_token(config, "bos_token");
    impl->eos_token = config_token(config, "eos_token");
    impl->add_bos_token = config.boolean_or("add_bos_token", false);
  }
  impl->json_text = std::move(tokenizer_json);
  impl->config_text = std::move(tokenizer_config_json);
  HfTokenizer tokenizer(std::move(impl));
  if (!tokenizer.impl_->eos_token) {
    for (const char* name : {"<|endoftext|>", "</s>", "<|end_of_text|>"}) {
      if (tokenizer.impl_->added_by_content.count(name)) {
        const_cast<Impl&>(*tokenizer.impl_).eos_token = name;
        break;
      }
    }
  }
  return tokenizer;
}

void HfTokenizer::Impl::encode_text(std::string_view text, bool at_text_start, std::vector<TokenId>& ids) const {
  if (text.empty()) return;
  if (normalizer.empty()) {
    encode_normalized(text, at_text_start, ids);
    return;
  }
  thread_local std::string normalized;
  normalized.assign(text);
  normalizer.normalize(normalized);
  if (normalized_matcher.empty()) {
    encode_normalized(normalized, at_text_start, ids);
    return;
  }
  const std::string own = normalized;  // the matcher's segments point into it while pieces reuse the buffers
  std::vector<HfSegment> segments;
  normalized_matcher.split(own, segments);
  for (const HfSegment& segment : segments) {
    if (segment.token != no_token) ids.push_back(segment.token);
    else encode_normalized(std::string_view(own).substr(segment.start, segment.end - segment.start),
                           at_text_start && segment.start == 0, ids);
  }
}

void HfTokenizer::Impl::encode_normalized(std::string_view text, bool at_text_start, std::vector<TokenId>& ids) const {
  if (text.empty()) return;
  thread_local HfPieces pieces, scratch;
  pre_tokenizer.pre_tokenize(text, at_text_start, pieces, scratch);
  for (const TextRange range : pieces.ranges)
    model.encode_piece(std::string_view(pieces.text).substr(range.start, range.end - range.start), ids);
}

void HfTokenizer::encode_into(std::string_view text, std::vector<TokenId>& ids, bool add_special_tokens) const {
  const Impl& impl = *impl_;
  if (add_special_tokens) ids.insert(ids.end(), impl.prefix.begin(), impl.prefix.end());
  std::string repaired;
  const std::string_view valid = valid_utf8(text, repaired);
  if (impl.raw_matcher.empty()) {
    impl.encode_text(valid, true, ids);
  } else {
    std::vector<HfSegment> segments;
    impl.raw_matcher.split(valid, segments);
    for (const HfSegment& segment : segments) {
      if (segment.token != no_token) ids.push_back(segment.token);
      else impl.encode_text(valid.substr(segment.start, segment.end - segment.start), segment.start == 0, ids);
    }
  }
  if (add_special_tokens) ids.insert(ids.end(), impl.suffix.begin(), impl.suffix.end());
}

std::vector<TokenId> HfTokenizer::encode(std::string_view text, bool add_special_tokens) const {
  std::vector<TokenId> ids;
  ids.reserve(text.size() / 3 + 4);
  encode_into(text, ids, add_special_tokens);
  return ids;
}

std::string HfTokenizer::decode(std::span<const TokenId> ids, bool skip_special_tokens) const {
  const Impl& impl = *impl_;
  const auto check = [&](std::size_t position) {
    const TokenId id = ids[position];
    if (!impl.added_by_id.count(id) && !impl.model.has(id)) {
      throw DecodeError("cannot decode id " + (id == no_token ? std::string("out of range") : std::to_string(id)) +
                        " at position " + std::to_string(position) + ": not a token of this tokenizer (vocabulary of " +
                        std::to_string(impl.vocab_size) + ")");
    }
  };
  if (impl.decoder.byte_level_only() && impl.model.byte_level()) {
    std::string text;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      check(i);
      if (const auto added = impl.added_by_id.find(ids[i]); added != impl.added_by_id.end()) {
        if (!(skip_special_tokens && impl.added[added->second].special)) text += impl.added_bytes[added->second];
      } else {
        text += impl.model.token_bytes(ids[i]);
      }
    }
    return text;
  }
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (std::size_t i = 0; i < ids.size(); ++i) {
    check(i);
    if (const HfAddedToken* added = impl.added_token(ids[i])) {
      if (!(skip_special_tokens && added->special)) tokens.push_back(added->content);
    } else {
      tokens.push_back(impl.model.token_text(ids[i]));
    }
  }
  return impl.decoder.decode(std::move(tokens));
}

std::size_t HfTokenizer::vocab_size() const { return impl_->vocab_size; }

std::optional<TokenId> HfTokenizer::token_id(std::string_view text) const {
  if (const auto found = impl_->added_by_content.find(std::string(text)); found != impl_->added_by_content.end())
    return impl_->added[found->second].id;
  return impl_->model.find_text(text);
}

std::string HfTokenizer::token_text(TokenId id) const {
  if (const HfAddedToken* added = impl_->added_token(id)) return added->content;
  if (!impl_->model.has(id)) throw DecodeError("no token has the id " + std::to_string(id));
  return impl_->model.token_text(id);
}

bool HfTokenizer::is_special(TokenId id) const {
  const HfAddedToken* added = impl_->added_token(id);
  return added && added->special;
}

std::optional<TokenId> HfTokenizer::bos_id() const { return impl_->bos_token ? token_id(*impl_->bos_token) : std::nullopt; }
std::optional<TokenId> HfTokenizer::eos_id() const { return impl_->eos_token ? token_id(*impl_->eos_token) : std::nullopt; }
std::optional<std::string> HfTokenizer::bos_token() const { return impl_->bos_token; }
std::optional<std::string> HfTokenizer::eos_token() const { return impl_->eos_token; }
bool HfTokenizer::add_bos_token() const { return impl_->add_bos_token; }
const std::string& HfTokenizer::tokenizer_json() const { return impl_->json_text; }
const std::optional<std::string>& HfTokenizer::tokenizer_config_json() const { return impl_->config_text; }

}  // namespace tg::tokenizer
