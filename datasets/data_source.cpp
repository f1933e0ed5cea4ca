#include "tinygpt/datasets/data_source.h"

#include <filesystem>

#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

std::string absolute_path(const std::string& path) {
  std::error_code error;
  const std::filesystem::path absolute = std::filesystem::absolute(path, error);
  return error ? path : absolute.lexically_normal().string();
}

}  // namespace

std::string DataSource::description() const {
  return "'" + path + "'" + (val_path.empty() ? "" : " and '" + val_path + "'") + " (" + std::to_string(bytes) +
         (kind == "prepared" ? " tokens, prepared" : " bytes") + ", xxh3 " + xxh3 + ")";
}

nlohmann::json DataSource::to_json() const {
  nlohmann::json json = {{"kind", kind}, {"path", path}, {"bytes", bytes}, {"xxh3", xxh3}};
  if (!val_path.empty()) json["val_path"] = val_path;
  return json;
}

DataSource DataSource::from_json(const nlohmann::json& json, const std::string& where) {
  check(json.is_object(), where, " is not a JSON object");
  const auto text = [&](const char* key) {
    check(json.contains(key) && json.at(key).is_string(), where, " has no text '", key, "'");
    return json.at(key).get<std::string>();
  };
  DataSource source;
  source.kind = text("kind");
  check(source.kind == "text" || source.kind == "prepared" || source.kind == "chat", where, ": 'kind' is '",
        source.kind, "'; expected text, prepared or chat");
  source.path = text("path");
  if (json.contains("val_path")) source.val_path = text("val_path");
  source.xxh3 = text("xxh3");
  check(parse_xxh3_hex(source.xxh3).has_value(), where, ": 'xxh3' is not 16 hex digits");
  const std::optional<int64_t> bytes = json.contains("bytes") ? json_integer<int64_t>(json.at("bytes")) : std::nullopt;
  check(bytes.has_value() && *bytes >= 0, where, ": 'bytes' is not an integer >= 0");
  source.bytes = *bytes;
  return source;
}

DataSource text_source(const std::string& path, std::string_view text) {
  Xxh3Hasher hasher;
  hasher.update(text.data(), text.size());
  return {"text", absolute_path(path), static_cast<int64_t>(text.size()), xxh3_hex(hasher.digest()), ""};
}

DataSource chat_source(const std::string& path, std::string_view text, const std::string& val_path,
                       std::string_view val_text) {
  DataSource source = text_source(path, text);
  source.kind = "chat";
  if (val_path.empty()) return source;
  Xxh3Hasher hasher;
  hasher.update(val_text.data(), val_text.size());
  const uint64_t hashes[2] = {*parse_xxh3_hex(source.xxh3), hasher.digest()};
  Xxh3Hasher both;
  both.update(hashes, sizeof hashes);
  source.xxh3 = xxh3_hex(both.digest());
  source.bytes += static_cast<int64_t>(val_text.size());
  source.val_path = absolute_path(val_path);
  return source;
}

DataSource prepared_source(const std::string& directory, int64_t tokens, uint64_t train_xxh3, uint64_t val_xxh3) {
  const uint64_t hashes[2] = {train_xxh3, val_xxh3};
  Xxh3Hasher hasher;
  hasher.update(hashes, sizeof hashes);
  return {"prepared", absolute_path(directory), tokens, xxh3_hex(hasher.digest()), ""};
}

}  // namespace tg
