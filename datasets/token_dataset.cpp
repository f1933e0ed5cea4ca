#include "tinygpt/datasets/token_dataset.h"

#include <filesystem>

#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"

namespace tg {

namespace {

namespace fs = std::filesystem;

// A meta.json holds a few hundred bytes, or a char vocabulary of at most
// 1.1 million characters (4.4 MB): a larger file is not one prepare wrote.
constexpr uintmax_t kMaxMetaBytes = uintmax_t{16} << 20;

// 'path', as messages name files. (Built by appending: GCC 12 warns about
// "'" + std::string falsely, -Wrestrict.)
std::string quoted(const std::string& path) {
  std::string text = "'";
  text += path;
  text += '\'';
  return text;
}

std::string meta_path_in(const std::string& directory) {
  return (fs::path(directory) / kTokenDatasetMetaFile).string();
}

TokenDatasetMeta read_meta(const std::string& directory) {
  check(fs::is_directory(directory), "'", directory, "' is not a prepared dataset: no such directory (run tinygpt prepare)");
  const std::string path = meta_path_in(directory);
  std::error_code error;
  check(fs::exists(path, error), "'", directory, "' is not a prepared dataset: it has no ", kTokenDatasetMetaFile,
        " (run tinygpt prepare --out ", directory, ")");
  check(fs::is_regular_file(path, error), "'", path, "' is not a regular file (a pipe or a device?); a prepared "
        "dataset's meta.json is a file tinygpt prepare wrote");
  const uintmax_t bytes = fs::file_size(path);
  check(bytes <= kMaxMetaBytes, "'", path, "' has ", bytes, " bytes; a meta.json has at most ", kMaxMetaBytes,
        ": this is not one tinygpt prepare wrote");
  const std::string text = read_text_file(path);
  nlohmann::json json;
  try {
    json = parse_bounded_json(text, quoted(path));
  } catch (const nlohmann::json::exception& error) {
    fail("'", path, "': not valid JSON (truncated?): ", json_error_text(error));
  }
  return TokenDatasetMeta::from_json(json, quoted(path));
}

// A char vocabulary's error names no file: it is prefixed with meta.json's; a BPE file's error
// starts with its own path and passes as it is.
tokenizer::CharTokenizer char_vocabulary(const DatasetTokenizerMeta& meta, const std::string& where) {
  try {
    return tokenizer::CharTokenizer::deserialize(meta.characters, meta.special_tokens);
  } catch (const tokenizer::TokenizerError& error) {
    fail(where, ": \"tokenizer.characters\": ", error.what());
  }
}

tokenizer::TextTokenizer load_tokenizer(const TokenDatasetMeta& meta, const std::string& directory) {
  const std::string where = quoted(meta_path_in(directory));
  if (meta.tokenizer.type == "char") {
    tokenizer::TextTokenizer loaded(char_vocabulary(meta.tokenizer, where));
    check(loaded.vocab_size() == meta.vocab_size, where, ": \"tokenizer.characters\" and its special tokens make ",
          loaded.vocab_size(), " tokens but \"vocab_size\" is ", meta.vocab_size);
    return loaded;
  }
  if (meta.tokenizer.type == "hf") {
    const fs::path json_path = fs::path(directory) / meta.tokenizer.tokenizer_json_file;
    std::optional<std::string> config;
    if (!meta.tokenizer.tokenizer_config_file.empty())
      config = read_text_file((fs::path(directory) / meta.tokenizer.tokenizer_config_file).string());
    tokenizer::TextTokenizer loaded(
        tokenizer::HfTokenizer::from_texts(read_text_file(json_path.string()), std::move(config), json_path.string()));
    check(loaded.vocab_size() == meta.vocab_size, where, ": ", meta.tokenizer.tokenizer_json_file, " holds ",
          loaded.vocab_size(), " tokens but \"vocab_size\" is ", meta.vocab_size);
    return loaded;
  }
  tokenizer::TextTokenizer loaded(tokenizer::Gpt2Tokenizer(tokenizer::read_gpt2_vocabulary(
      fs::path(directory) / meta.tokenizer.encoder_file, fs::path(directory) / meta.tokenizer.merges_file)));
  check(loaded.vocab_size() == meta.vocab_size, where, ": the tokenizer files (", meta.tokenizer.encoder_file, ", ",
        meta.tokenizer.merges_file, ") hold ", loaded.vocab_size(), " tokens but \"vocab_size\" is ",
        meta.vocab_size);
  return loaded;
}

TokenFile open_split(const TokenDatasetMeta& meta, const TokenSplitMeta& split, const std::string& directory) {
  TokenFile file((fs::path(directory) / split.file).string(), meta.dtype, meta.vocab_size);
  const int64_t width = token_dtype_bytes(meta.dtype);
  check(file.size() == split.tokens, "token file '", file.path(), "' holds ", file.size(), " tokens (",
        file.size() * width, " bytes of ", token_dtype_name(meta.dtype), ") but ", kTokenDatasetMetaFile, " says ",
        split.tokens, " (", split.tokens * width, " bytes): the file is truncated or not the one prepare wrote");
  return file;
}

}  // namespace

void verify_token_file_hash(const std::string& path, uint64_t expected_xxh3) {
  const uint64_t actual = file_xxh3(path);
  check(actual == expected_xxh3, "token file '", path, "' is damaged: its XXH3 hash is ", xxh3_hex(actual), " but ",
        kTokenDatasetMetaFile, " says ", xxh3_hex(expected_xxh3));
}

PreparedDataset open_prepared_dataset(const std::string& directory, HashCheck hashes) {
  TokenDatasetMeta meta = read_meta(directory);
  TokenFile train = open_split(meta, meta.train, directory);
  TokenFile val = open_split(meta, meta.val, directory);
  if (hashes == HashCheck::verify) {
    verify_token_file_hash(train.path(), meta.train.xxh3);
    verify_token_file_hash(val.path(), meta.val.xxh3);
  }
  tokenizer::TextTokenizer tokenizer = load_tokenizer(meta, directory);
  return PreparedDataset{directory, std::move(meta), std::move(train), std::move(val), std::move(tokenizer)};
}

}  // namespace tg
