#include "tinygpt/tokenizer/hf_json.h"

namespace tg::tokenizer {

HfField HfField::child(const char* key) const {
  if (!node.is_object()) fail("expected an object");
  const auto member = node.find(key);
  if (member == node.end()) fail(std::string("has no field '") + key + "'");
  return {*member, path.empty() ? std::string(key) : path + "." + key, file};
}

bool HfField::has(const char* key) const {
  if (!node.is_object()) return false;
  const auto member = node.find(key);
  return member != node.end() && !member->is_null();
}

std::string HfField::string() const {
  if (!node.is_string()) fail("expected a string");
  return node.get<std::string>();
}

bool HfField::boolean() const {
  if (!node.is_boolean()) fail("expected true or false");
  return node.get<bool>();
}

std::string HfField::string_or(const char* key, const std::string& fallback) const {
  return has(key) ? child(key).string() : fallback;
}

bool HfField::boolean_or(const char* key, bool fallback) const { return has(key) ? child(key).boolean() : fallback; }

}  // namespace tg::tokenizer
