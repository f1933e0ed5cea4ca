#include "tinygpt/datasets/token_dataset_meta.h"

#include <cstdint>
#include <limits>

#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

using Json = nlohmann::json;

// Reads the fields of one JSON object, each checked before it is returned;
// errors start with the file and the path to the field ("val.tokens").
class FieldReader {
 public:
  FieldReader(const Json& object, std::string where, std::string prefix)
      : object_(object), where_(std::move(where)), prefix_(std::move(prefix)) {
    check(object_.is_object(), where_, ": ", prefix_.empty() ? "the file" : "\"" + prefix_ + "\"",
          " must be a JSON object, got ", object_.type_name());
  }

  const Json& field(const char* key) const {
    check(object_.contains(key), where_, ": \"", name(key), "\" is missing");
    return object_.at(key);
  }

  bool contains(const char* key) const { return object_.contains(key); }

  bool boolean(const char* key) const {
    const Json& value = field(key);
    check(value.is_boolean(), where_, ": \"", name(key), "\" must be true or false, got ", value.dump());
    return value.get<bool>();
  }

  // An XXH3-64 hash as xxh3_hex writes it.
  uint64_t hash(const char* key) const {
    const std::string text_hash = text(key);
    const std::optional<uint64_t> parsed = parse_xxh3_hex(text_hash);
    check(parsed.has_value(), where_, ": \"", name(key), "\" must be 16 lower-case hex digits, got \"", text_hash,
          "\"");
    return *parsed;
  }

  std::string text(const char* key) const {
    const Json& value = field(key);
    check(value.is_string(), where_, ": \"", name(key), "\" must be a string, got ", value.dump());
    return value.get<std::string>();
  }

  // An integer from `low` to `high`: 5.0, "5" and 1e3 are not integers.
  int64_t integer(const char* key, int64_t low, int64_t high) const {
    const Json& value = field(key);
    // nlohmann keeps a non-negative integer as unsigned; one beyond int64 is out of every range here.
    const bool is_integer = value.is_number_integer() &&
                            !(value.is_number_unsigned() && value.get<uint64_t>() > uint64_t{INT64_MAX});
    const int64_t number = is_integer ? value.get<int64_t>() : 0;
    check(is_integer && number >= low && number <= high, where_, ": \"", name(key), "\" must be an integer from ",
          low, " to ", high, ", got ", value.dump());
    return number;
  }

  // A file in the dataset's directory: a plain name, never a path.
  std::string file_name(const char* key) const {
    const std::string file = text(key);
    check(!file.empty() && file != "." && file != ".." && file.find('/') == std::string::npos &&
              file.find('\0') == std::string::npos,
          where_, ": \"", name(key), "\" must name a file in the dataset's directory, got \"", file, "\"");
    return file;
  }

  // A list of non-empty strings.
  std::vector<std::string> strings(const char* key) const {
    const Json& value = field(key);
    check(value.is_array() && value.size() <= 1024, where_, ": \"", name(key), "\" must be a list of at most 1024 strings");
    std::vector<std::string> items;
    for (const Json& item : value) {
      check(item.is_string() && !item.get<std::string>().empty(), where_, ": \"", name(key),
            "\" must hold non-empty strings, got ", item.dump());
      items.push_back(item.get<std::string>());
    }
    return items;
  }

  FieldReader object(const char* key) const { return FieldReader(field(key), where_, name(key)); }

  std::string name(const char* key) const { return prefix_.empty() ? key : prefix_ + "." + key; }
  const std::string& where() const { return where_; }

 private:
  const Json& object_;
  std::string where_;
  std::string prefix_;
};

DatasetTokenizerMeta read_tokenizer(const FieldReader& fields) {
  DatasetTokenizerMeta tokenizer;
  tokenizer.type = fields.text("type");
  if (tokenizer.type == "char") {
    tokenizer.characters = fields.text("characters");
    check(!tokenizer.characters.empty(), fields.where(), ": \"", fields.name("characters"), "\" is empty");
    if (fields.contains("special_tokens")) tokenizer.special_tokens = fields.strings("special_tokens");
  } else if (tokenizer.type == "gpt2" || tokenizer.type == "bpe") {
    tokenizer.encoder_file = fields.file_name("encoder");
    tokenizer.merges_file = fields.file_name("merges");
  } else if (tokenizer.type == "hf") {
    tokenizer.tokenizer_json_file = fields.file_name("tokenizer_json");
    if (fields.contains("tokenizer_config")) tokenizer.tokenizer_config_file = fields.file_name("tokenizer_config");
  } else {
    fail(fields.where(), ": \"", fields.name("type"), "\" is \"", tokenizer.type,
         "\"; expected \"char\", \"gpt2\", \"bpe\" or \"hf\"");
  }
  return tokenizer;
}

TokenSplitMeta read_split(const FieldReader& fields, TokenDType dtype) {
  TokenSplitMeta split;
  split.file = fields.file_name("file");
  // At most what a file of this dtype can hold, so that tokens x width cannot overflow.
  split.tokens = fields.integer("tokens", 0, std::numeric_limits<int64_t>::max() / token_dtype_bytes(dtype));
  split.xxh3 = fields.hash("xxh3");
  return split;
}

nlohmann::ordered_json split_json(const TokenSplitMeta& split) {
  return {{"file", split.file}, {"tokens", split.tokens}, {"xxh3", xxh3_hex(split.xxh3)}};
}

ConversationSplitMeta read_conversation_split(const FieldReader& fields) {
  ConversationSplitMeta split;
  split.starts_file = fields.file_name("starts");
  split.mask_file = fields.file_name("mask");
  split.count = fields.integer("count", 1, std::numeric_limits<int64_t>::max() / 8 - 1);
  split.starts_xxh3 = fields.hash("starts_xxh3");
  split.mask_xxh3 = fields.hash("mask_xxh3");
  return split;
}

nlohmann::ordered_json conversation_split_json(const ConversationSplitMeta& split) {
  return {{"starts", split.starts_file},
          {"mask", split.mask_file},
          {"count", split.count},
          {"starts_xxh3", xxh3_hex(split.starts_xxh3)},
          {"mask_xxh3", xxh3_hex(split.mask_xxh3)}};
}

}  // namespace

nlohmann::ordered_json TokenDatasetMeta::to_json() const {
  nlohmann::ordered_json tokenizer_json = {{"type", tokenizer.type}};
  if (tokenizer.type == "char") {
    tokenizer_json["characters"] = tokenizer.characters;
    if (!tokenizer.special_tokens.empty()) tokenizer_json["special_tokens"] = tokenizer.special_tokens;
  } else if (tokenizer.type == "hf") {
    tokenizer_json["tokenizer_json"] = tokenizer.tokenizer_json_file;
    if (!tokenizer.tokenizer_config_file.empty()) tokenizer_json["tokenizer_config"] = tokenizer.tokenizer_config_file;
  } else {
    tokenizer_json["encoder"] = tokenizer.encoder_file;
    tokenizer_json["merges"] = tokenizer.merges_file;
  }
  nlohmann::ordered_json sources_json = nlohmann::ordered_json::array();
  for (const TokenSourceMeta& source : sources) {
    nlohmann::ordered_json entry = {{"file", source.file}, {"bytes", source.bytes}};
    if (source.stream) {
      entry["stream"] = true;
      entry["xxh3"] = xxh3_hex(source.xxh3);
    }
    sources_json.push_back(std::move(entry));
  }
  nlohmann::ordered_json json = {{"format", kTokenDatasetFormat}, {"tokenizer", tokenizer_json},
                                 {"vocab_size", vocab_size},          {"dtype", token_dtype_name(dtype)},
                                 {"train", split_json(train)},        {"val", split_json(val)},
                                 {"sources", sources_json}};
  if (conversations)
    json["conversations"] = {{"train", conversation_split_json(conversations->train)},
                             {"val", conversation_split_json(conversations->val)}};
  return json;
}

TokenDatasetMeta TokenDatasetMeta::from_json(const Json& json, const std::string& where) {
  const FieldReader fields(json, where, "");
  const std::string format = fields.text("format");
  check(format == kTokenDatasetFormat, where, ": unknown format \"", format, "\" (this tinygpt reads \"",
        kTokenDatasetFormat, "\")");

  TokenDatasetMeta meta;
  meta.tokenizer = read_tokenizer(fields.object("tokenizer"));
  const std::string dtype = fields.text("dtype");
  const std::optional<TokenDType> parsed_dtype = token_dtype_from_name(dtype);
  check(parsed_dtype.has_value(), where, ": \"dtype\" is \"", dtype, "\"; expected \"uint16\" or \"uint32\"");
  meta.dtype = *parsed_dtype;
  meta.vocab_size = fields.integer("vocab_size", 1, token_dtype_max_vocab_size(TokenDType::uint32));
  check(meta.vocab_size <= token_dtype_max_vocab_size(meta.dtype), where, ": \"vocab_size\" ", meta.vocab_size,
        " has ids up to ", meta.vocab_size - 1, ", which do not fit \"dtype\" ", dtype);
  meta.train = read_split(fields.object("train"), meta.dtype);
  meta.val = read_split(fields.object("val"), meta.dtype);
  check(meta.train.file != meta.val.file, where, ": \"train.file\" and \"val.file\" are both \"", meta.train.file,
        "\"");

  const Json& sources = fields.field("sources");
  check(sources.is_array(), where, ": \"sources\" must be a JSON array, got ", sources.type_name());
  for (std::size_t index = 0; index < sources.size(); ++index) {
    const FieldReader source(sources[index], where, "sources[" + std::to_string(index) + "]");
    TokenSourceMeta entry{source.text("file"), source.integer("bytes", 0, std::numeric_limits<int64_t>::max())};
    entry.stream = source.contains("stream") && source.boolean("stream");
    if (entry.stream) entry.xxh3 = source.hash("xxh3");
    meta.sources.push_back(std::move(entry));
  }
  if (fields.contains("conversations")) {
    const FieldReader conversations = fields.object("conversations");
    meta.conversations = ConversationsMeta{read_conversation_split(conversations.object("train")),
                                           read_conversation_split(conversations.object("val"))};
  }
  return meta;
}

}  // namespace tg
