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
  return "'" + path + "' (" + std::to_string(bytes) + (kind == "text" ? " bytes" : " tokens, prepared") + ", xxh3 " +
         xxh3 + ")";
}

nlohmann::json DataSource::to_json() const {
  return {{"kind", kind}, {"path", path}, {"bytes", bytes}, {"xxh3", xxh3}};
}

DataSource DataSource::from_json(const nlohmann::json& json, const std::string& where) {
  check(json.is_object(), where, " is not a JSON object");
  const auto text = [&](const char* key) {
    check(json.contains(key) && json.at(key).is_string(), where, " has no text '", key, "'");
    return json.at(key).get<std::string>();
  };
  DataSource source;
  source.kind = text("kind");
  check(source.kind == "text" || source.kind == "prepared", where, ": 'kind' is '", source.kind,
        "'; expected text or prepared");
  source.path = text("path");
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
  return {"text", absolute_path(path), static_cast<int64_t>(text.size()), xxh3_hex(hasher.digest())};
}

DataSource prepared_source(const std::string& directory, int64_t tokens, uint64_t train_xxh3, uint64_t val_xxh3) {
  const uint64_t hashes[2] = {train_xxh3, val_xxh3};
  Xxh3Hasher hasher;
  hasher.update(hashes, sizeof hashes);
  return {"prepared", absolute_path(directory), tokens, xxh3_hex(hasher.digest())};
}

}  // namespace tg
