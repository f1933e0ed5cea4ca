#include "tinygpt/tensor/bounded_json.h"

#include "tinygpt/tensor/error.h"

namespace tg {

nlohmann::json parse_bounded_json(std::string_view text, const std::string& what) {
  const nlohmann::json::parser_callback_t limit_depth = [&](int depth, nlohmann::json::parse_event_t,
                                                            nlohmann::json&) {
    check(depth <= kMaxJsonDepth, what, ": the JSON nests deeper than ", kMaxJsonDepth,
          " levels, which no file tinygpt reads does; refusing it");
    return true;
  };
  return nlohmann::json::parse(text.begin(), text.end(), limit_depth);
}

std::string json_error_text(const nlohmann::json::exception& error) {
  const std::string text = error.what();
  const size_t code_end = text.rfind("] ", text.find(' '));  // the code is the first word
  return text.rfind("[json.exception.", 0) == 0 && code_end != std::string::npos ? text.substr(code_end + 2) : text;
}

}  // namespace tg
