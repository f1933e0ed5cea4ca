// JSON from files that strangers write (safetensors headers, Hugging Face
// config.json, a checkpoint's metadata), parsed with a nesting limit, and its
// integers read with a range check.
//
// nlohmann parses without recursion, but printing a value recurses once per
// level (error messages print what they reject), so a file nested 70,000
// levels deep overflowed the stack. No format tinygpt reads nests more than a
// few levels; past kMaxJsonDepth the file is refused before anything uses it.
// (tokenizer/gpt2_files.cpp applies the same limit to encoder.json, with its
// own message and error type.)
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tg {

inline constexpr int kMaxJsonDepth = 64;

// Parses `text`; throws tg::Error naming `what` when it nests deeper than
// kMaxJsonDepth, and nlohmann's exceptions when it is not JSON (a syntax
// error, or a number beyond a double such as 1e999).
// Linear in the text's length.
nlohmann::json parse_bounded_json(std::string_view text, const std::string& what);

// Whether arrays and objects in `text` nest more than `limit` deep (brackets in
// strings do not count); one pass, stopping at the first level past the limit.
bool json_nests_deeper_than(std::string_view text, int limit);

// nlohmann's message without its "[json.exception.parse_error.101] " code.
std::string json_error_text(const nlohmann::json::exception& error);

// `value` as an Integer (int64_t, uint64_t, ...), or nothing when it is not an
// integer that Integer holds. nlohmann's get<Integer>() does not check: it reads
// 2.5 as 2 and -1 as 2^64 - 1, and converting 4e19 (a double) is undefined behaviour.
template <class Integer>
std::optional<Integer> json_integer(const nlohmann::json& value) {
  constexpr auto lowest = std::numeric_limits<Integer>::min();
  constexpr auto highest = static_cast<uint64_t>(std::numeric_limits<Integer>::max());
  if (value.is_number_unsigned()) {
    const uint64_t number = value.get<uint64_t>();
    if (number > highest) return std::nullopt;
    return static_cast<Integer>(number);
  }
  if (value.is_number_integer()) {
    const int64_t number = value.get<int64_t>();
    if (number < static_cast<int64_t>(lowest) || (number > 0 && static_cast<uint64_t>(number) > highest))
      return std::nullopt;
    return static_cast<Integer>(number);
  }
  return std::nullopt;
}

}  // namespace tg
