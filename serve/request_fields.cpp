// Reading a request's fields (serve/request_fields.h).
#include "tinygpt/serve/request_fields.h"

#include <cmath>
#include <limits>
#include <sstream>

namespace tg::serve {

using nlohmann::json;

json parse_body(std::string_view body_text) {
  json body;
  try {
    body = json::parse(body_text);
  } catch (const json::exception& error) {  // a syntax error, or a number past any double (1e400)
    throw ApiError(400, std::string("the request body is not valid JSON: ") + error.what());
  }
  if (!body.is_object()) throw ApiError(400, "the request body must be a JSON object");
  return body;
}

[[noreturn]] void refuse(const std::string& field, const std::string& message) {
  throw ApiError(400, field + " " + message, field);
}

const json* field(const json& body, const char* name) {
  const auto found = body.find(name);
  return found == body.end() || found->is_null() ? nullptr : &*found;
}

std::optional<int64_t> integer_field(const json& body, const char* name, int64_t low, int64_t high) {
  const json* value = field(body, name);
  if (!value) return std::nullopt;
  const std::string range = "from " + std::to_string(low) + " to " + std::to_string(high);
  if (!value->is_number_integer()) refuse(name, "must be an integer " + range + ", got " + value->dump());
  const bool too_large =
      value->is_number_unsigned() && value->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  const int64_t number = too_large ? std::numeric_limits<int64_t>::max() : value->get<int64_t>();
  if (too_large || number < low || number > high) refuse(name, "must be an integer " + range + ", got " + value->dump());
  return number;
}

std::optional<double> number_field(const json& body, const char* name, double low, double high) {
  const json* value = field(body, name);
  if (!value) return std::nullopt;
  const auto bounds = [&] {
    std::ostringstream text;
    text << "must be a number from " << low << " to " << high << ", got " << value->dump();
    return text.str();
  };
  if (!value->is_number()) refuse(name, bounds());
  const double number = value->get<double>();
  if (!std::isfinite(number) || number < low || number > high) refuse(name, bounds());
  return number;
}

std::optional<bool> bool_field(const json& body, const char* name) {
  const json* value = field(body, name);
  if (!value) return std::nullopt;
  if (!value->is_boolean()) refuse(name, "must be true or false, got " + value->dump());
  return value->get<bool>();
}

}  // namespace tg::serve
