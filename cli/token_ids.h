// The token ids a user types (eval --ids, tokenize --decode): decimal integers
// separated by whitespace.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace tg::cli {

// The ids of `text`; a word that is not an id in [0, 2^32 - 1) throws tg::Error
// naming `source` (the flag), the word and its position.
std::vector<int64_t> parse_token_ids(const std::string& text, const std::string& source);

}  // namespace tg::cli
