// JSON from files that strangers write (safetensors headers, Hugging Face
// config.json, a checkpoint's metadata), parsed with a nesting limit.
//
// nlohmann parses without recursion, but printing a value recurses once per
// level (error messages print what they reject), so a file nested 70,000
// levels deep overflowed the stack. No format tinygpt reads nests more than a
// few levels; past kMaxJsonDepth the file is refused before anything uses it.
// (tokenizer/gpt2_files.cpp applies the same limit to encoder.json: the
// tokenizer layer includes nothing from this one.)
#pragma once
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tg {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; throws tg::Error naming `what` when it nests deeper than
// kMaxJsonDepth, and nlohmann's exceptions when it is not JSON (a syntax
// error, or a number beyond a double such as 1e999).
nlohmann::json parse_bounded_json(std::string_view text, const std::string& what);

// nlohmann's message without its "[json.exception.parse_error.101] " code.
std::string json_error_text(const nlohmann::json::exception& error);

}  // namespace tg
