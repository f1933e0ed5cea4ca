// Reading a Hugging Face tokenizer.json: every complaint names the file and
// the field, e.g. "models/tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex:
// the regex '(' does not compile (missing closing parenthesis)".
//
// tokenizer.json comes from strangers, so each reader of hf_*.cpp takes its
// node through these helpers instead of nlohmann's get<>(), which would throw
// a message naming neither.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tinygpt/tokenizer/errors.h"

namespace tg::tokenizer {

// A node of the file and the path that leads to it ("model.merges[3]").
struct HfField {
  const nlohmann::json& node;
  std::string path;
  const std::string& file;  // the file's name, first in every message

  [[noreturn]] void fail(std::string_view what) const {
    throw TokenizerFileError(file + ": " + (path.empty() ? "" : path + ": ") + std::string(what));
  }
  HfField child(const char* key) const;
  HfField at(std::size_t index) const { return {node[index], path + "[" + std::to_string(index) + "]", file}; }
  // A member that may be absent or null.
  bool has(const char* key) const;
  std::string string() const;
  bool boolean() const;
  // The member `key` as a string/bool, or `fallback` when absent or null.
  std::string string_or(const char* key, const std::string& fallback) const;
  bool boolean_or(const char* key, bool fallback) const;
  // The "type" member of a normalizer, pre-tokenizer, model, decoder...
  std::string type() const { return child("type").string(); }
};

}  // namespace tg::tokenizer
