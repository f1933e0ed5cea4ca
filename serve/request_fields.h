// Reading a request's JSON body field by field, each mistake a 400 in OpenAI's
// error shape naming the field (serve/openai_api.h's ApiError). Shared by the
// OpenAI endpoints (serve/openai_requests.cpp) and the step-through's
// (serve/explain_api.cpp).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tinygpt/serve/openai_api.h"

namespace tg::serve {

// The body as a JSON object. The parser refuses ill-formed UTF-8 and lone
// surrogates in strings, so every text read from it is valid UTF-8 and dumps
// again without throwing.
nlohmann::json parse_body(std::string_view body_text);

// Throws ApiError(400, "<field> <message>", field).
[[noreturn]] void refuse(const std::string& field, const std::string& message);

// A field that is absent or null counts as not given (clients send `"stop": null`).
const nlohmann::json* field(const nlohmann::json& body, const char* name);

// An integer in [low, high]; a float (16.0), a string or a number past int64 is refused.
std::optional<int64_t> integer_field(const nlohmann::json& body, const char* name, int64_t low, int64_t high);

// A finite number in [low, high].
std::optional<double> number_field(const nlohmann::json& body, const char* name, double low, double high);

std::optional<bool> bool_field(const nlohmann::json& body, const char* name);

}  // namespace tg::serve
