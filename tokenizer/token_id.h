// The type of a token id, shared by every tokenizer in tokenizer/.
#pragma once

#include <cstdint>

namespace tg::tokenizer {

using TokenId = std::uint32_t;

// "No token": a merge that does not exist, an empty hash slot. The largest id,
// so that it also sorts after every real rank.
inline constexpr TokenId no_token = 0xFFFFFFFFu;

}  // namespace tg::tokenizer
