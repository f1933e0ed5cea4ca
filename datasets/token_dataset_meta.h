// meta.json, the description of a prepared dataset (`tinygpt prepare`): which
// tokenizer made the ids, how they are stored, and what each token file holds.
//
//   {
//     "format": "tinygpt-tokens-v1",
//     "tokenizer": {"type": "char", "characters": "\n !$&',-.3:;?ABC...xyz"},
//     "vocab_size": 65,
//     "dtype": "uint16",
//     "train": {"file": "train.bin", "tokens": 1003854, "xxh3": "9f2c...(16 hex digits)"},
//     "val": {"file": "val.bin", "tokens": 111540, "xxh3": "..."},
//     "sources": [{"file": "tinyshakespeare.txt", "bytes": 1115394}]
//   }
//
// "tokenizer" is {"type": "char", "characters": the vocabulary in id order} or
// {"type": "gpt2" (GPT-2's own vocabulary) or "bpe" (one from `tinygpt bpe-train`),
//  "encoder": "encoder.json", "merges": "vocab.bpe"}, copies of the vocabulary
// files kept in the dataset's directory so that it stands alone.
// "dtype" is "uint16" when every id fits 16 bits (vocab_size <= 65,535, as the format promises), else "uint32".
// "xxh3" is the XXH3-64 hash of the file's bytes (datasets/file_hash.h).
// "sources" are the text files the tokens came from, in order, as they were named.
// A source that was a stream (a pipe, "-" for standard input) also has
// "stream": true and the "xxh3" of its bytes, since its name says nothing later:
//     {"file": "/dev/fd/63", "bytes": 1115394, "stream": true, "xxh3": "..."}
//
// A dataset of conversations (`tinygpt prepare --chat`, datasets/prepare_conversations.h)
// also says where each split's conversations start and which of its ids are the
// assistant's (the targets of the loss), in two files beside its token file:
//     "conversations": {"train": {"starts": "train.starts", "mask": "train.mask", "count": 189,
//                                 "starts_xxh3": "...", "mask_xxh3": "..."}, "val": {...}}
// NAME.starts holds count + 1 little-endian int64 offsets into the split's ids
// (0 first, its token count last); NAME.mask one byte per id, 1 for the assistant's.
//
// Every file a meta.json names is a plain name inside the dataset's directory:
// one from a stranger cannot point anywhere else.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/datasets/token_file.h"

namespace tg {

inline constexpr const char* kTokenDatasetFormat = "tinygpt-tokens-v1";
inline constexpr const char* kTokenDatasetMetaFile = "meta.json";

struct DatasetTokenizerMeta {
  std::string type;          // "char", "gpt2", "bpe" or "hf"
  std::string characters;    // char: CharTokenizer::serialize() of the vocabulary
  std::string encoder_file;  // gpt2, bpe: the copies of encoder.json and vocab.bpe
  std::string merges_file;
  std::string tokenizer_json_file;    // hf: the copy of tokenizer.json
  std::string tokenizer_config_file;  // hf: the copy of tokenizer_config.json, or empty without one
  std::vector<std::string> special_tokens;  // char: its special tokens after the characters (ChatML's markers of conversations)
};

struct TokenSplitMeta {
  std::string file;
  int64_t tokens = 0;
  uint64_t xxh3 = 0;
};

struct TokenSourceMeta {
  std::string file;
  int64_t bytes = 0;
  bool stream = false;  // a pipe or standard input, copied before it was read
  uint64_t xxh3 = 0;    // a stream's only: the hash of its bytes
};

struct ConversationSplitMeta {
  std::string starts_file;
  std::string mask_file;
  int64_t count = 0;  // conversations
  uint64_t starts_xxh3 = 0;
  uint64_t mask_xxh3 = 0;
};

struct ConversationsMeta {
  ConversationSplitMeta train;
  ConversationSplitMeta val;
};

struct TokenDatasetMeta {
  DatasetTokenizerMeta tokenizer;
  int64_t vocab_size = 0;
  TokenDType dtype = TokenDType::uint16;
  TokenSplitMeta train;
  TokenSplitMeta val;
  std::vector<TokenSourceMeta> sources;
  std::optional<ConversationsMeta> conversations;  // a dataset of conversations only

  // The fields in the order above, "format" first.
  nlohmann::ordered_json to_json() const;
  // Checks every field before anything uses it: types, integers that are
  // integers, non-negative counts, a known format, dtype and tokenizer type,
  // a vocab_size from 1 to 2^32 - 1 whose ids fit the dtype, plain file names.
  // Throws tg::Error starting with `where` (the meta.json's path) and naming the field.
  static TokenDatasetMeta from_json(const nlohmann::json& json, const std::string& where);
};

}  // namespace tg
