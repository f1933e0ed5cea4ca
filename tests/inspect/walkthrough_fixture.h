// A tiny char-level model and its tokenizer, shared by the inspect/ tests.
#pragma once
#include <string>

#include "tinygpt/models/gpt.h"
#include "tests/models/tiny_gpt_config.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::testing {

inline tokenizer::TextTokenizer tiny_tokenizer() {
  return tokenizer::TextTokenizer(tokenizer::CharTokenizer::from_corpus("abcdefgh ,.!\n"));
}

// 2 blocks, 2 heads, C = 8, block_size 8, over tiny_tokenizer()'s 13 characters.
inline GPTConfig tiny_walkthrough_config(PositionalEncoding positional = PositionalEncoding::Learned) {
  return tiny_gpt_config({.vocab_size = tiny_tokenizer().vocab_size(), .positional = positional});
}

}  // namespace tg::testing
