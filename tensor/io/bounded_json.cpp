#include "tinygpt/tensor/io/bounded_json.h"

#include "tinygpt/tensor/error.h"

namespace tg {

bool json_nests_deeper_than(std::string_view text, int limit) {
  int depth = 0;
  bool in_string = false, escaped = false;
  for (const char character : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (character == '\\') escaped = true;
      else if (character == '"') in_string = false;
    } else if (character == '"') {
      in_string = true;
    } else if (character == '[' || character == '{') {
      if (++depth > limit) return true;
    } else if (character == ']' || character == '}') {
      --depth;
    }
  }
  return false;
}

nlohmann::json parse_bounded_json(std::string_view text, const std::string& what) {
  // The depth is counted in a pass of its own: nlohmann's parser callback, which could count it
  // during the parse, walks a container's elements again after each it closes (quadratic: a
  // safetensors header of 40,000 tensors took 10 s).
  check(!json_nests_deeper_than(text, kMaxJsonDepth + 1), what, ": the JSON nests deeper than ", kMaxJsonDepth,
        " levels, which no file tinygpt reads does; refusing it");
  return nlohmann::json::parse(text.begin(), text.end());
}

std::string json_error_text(const nlohmann::json::exception& error) {
  const std::string text = error.what();
  const size_t code_end = text.rfind("] ", text.find(' '));  // the code is the first word
  return text.rfind("[json.exception.", 0) == 0 && code_end != std::string::npos ? text.substr(code_end + 2) : text;
}

}  // namespace tg
