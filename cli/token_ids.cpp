#include "cli/token_ids.h"

#include <charconv>
#include <sstream>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/token_id.h"

namespace tg::cli {

std::vector<int64_t> parse_token_ids(const std::string& text, const std::string& source) {
  std::vector<int64_t> ids;
  std::istringstream words(text);
  std::string word;
  while (words >> word) {
    int64_t id = -1;
    const auto [end, error] = std::from_chars(word.data(), word.data() + word.size(), id);
    check(error == std::errc() && end == word.data() + word.size() && id >= 0 && id < static_cast<int64_t>(tokenizer::no_token), source,
          ": '", word, "' (word ", ids.size() + 1, ") is not a token id (give integers from 0 separated by spaces)");
    ids.push_back(id);
  }
  return ids;
}

}  // namespace tg::cli
