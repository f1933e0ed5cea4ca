// Where a training run's data came from: recorded in every checkpoint (the
// "data" metadata, training/checkpoint.h), so that `train --resume` finds the data
// again without --data and notices when a file is not the one the run trained on.
//
//   {"kind": "text", "path": "/abs/input.txt", "bytes": 1115394, "xxh3": "9f2c..."}
//   {"kind": "prepared", "path": "/abs/data/owt", "bytes": 9035582198,   (tokens in both splits)
//    "xxh3": "..."}                                                        (of the two token files' hashes)
//   {"kind": "chat", "path": "/abs/train.jsonl", "bytes": 51234,          (conversations, datasets/conversation_file.h:
//    "val_path": "/abs/val.jsonl", "xxh3": "..."}                          both files' bytes; a val file only with --val-data)
//
// Two sources hold the same data when kind, bytes and hash agree, wherever the
// file now lies: a moved corpus resumes, an edited one does not.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tg {

struct DataSource {
  std::string kind;   // "text", "prepared" or "chat"
  std::string path;   // absolute
  int64_t bytes = 0;  // text, chat: its size in bytes (chat: both files'); prepared: its tokens, both splits
  std::string xxh3;   // 16 hex digits (datasets/file_hash.h); chat with a val file: of both files' hashes
  std::string val_path;  // chat: the file of the val conversations, absolute; empty when they are the train file's last

  bool same_data(const DataSource& other) const {
    return kind == other.kind && bytes == other.bytes && xxh3 == other.xxh3;
  }
  // "'/abs/input.txt' (1115394 bytes, xxh3 9f2c...)"
  std::string description() const;
  nlohmann::json to_json() const;
  // Throws tg::Error starting with `where` when a field is missing or of the wrong type.
  static DataSource from_json(const nlohmann::json& json, const std::string& where);
};

DataSource text_source(const std::string& path, std::string_view text);
// `val_text` is empty (and `val_path` too) when the val conversations are the train file's last.
DataSource chat_source(const std::string& path, std::string_view text, const std::string& val_path,
                       std::string_view val_text);
DataSource prepared_source(const std::string& directory, int64_t tokens, uint64_t train_xxh3, uint64_t val_xxh3);

}  // namespace tg
