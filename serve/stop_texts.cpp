#include "tinygpt/serve/stop_texts.h"

#include <algorithm>

#include "tinygpt/tensor/error.h"

namespace tg::serve {

StopTexts::StopTexts(std::vector<std::string> texts) : texts_(std::move(texts)) {
  for (const std::string& text : texts_) check(!text.empty(), "StopTexts: an empty stop text would match everywhere");
}

std::string StopTexts::push(std::string_view piece) {
  if (found_) return "";
  held_back_ += piece;
  size_t first = std::string::npos;  // the earliest stop text wins, wherever it ends
  for (const std::string& text : texts_) first = std::min(first, held_back_.find(text));
  if (first != std::string::npos) {
    found_ = true;
    std::string passed = held_back_.substr(0, first);
    held_back_.clear();
    return passed;
  }
  // The longest end of the text that is the beginning of a stop text (shorter
  // than it: a whole one would have been found). A stop text is valid UTF-8, so
  // the cut falls between characters.
  size_t kept = 0;
  for (const std::string& text : texts_)
    for (size_t length = std::min(held_back_.size(), text.size() - 1); length > kept; --length)
      if (std::string_view(held_back_).substr(held_back_.size() - length) == std::string_view(text).substr(0, length)) {
        kept = length;
        break;
      }
  std::string passed = held_back_.substr(0, held_back_.size() - kept);
  held_back_.erase(0, held_back_.size() - kept);
  return passed;
}

std::string StopTexts::finish() {
  std::string rest;
  rest.swap(held_back_);
  return rest;
}

}  // namespace tg::serve
