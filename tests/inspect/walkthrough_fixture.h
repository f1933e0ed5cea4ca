// A tiny char-level model and its tokenizer, shared by the inspect/ tests.
#pragma once
#include <string>

#include "models/gpt.h"
#include "tokenizer/text_tokenizer.h"

namespace tg::testing {

inline tokenizer::TextTokenizer tiny_tokenizer() {
  return tokenizer::TextTokenizer(tokenizer::CharTokenizer::from_corpus("abcdefgh ,.!\n"));
}

// 2 blocks, 2 heads, C = 8, block_size 8, over tiny_tokenizer()'s 13 characters.
inline GPTConfig tiny_walkthrough_config(PositionalEncoding positional = PositionalEncoding::Learned) {
  GPTConfig config = GPTConfig::preset_named("cpu-small", tiny_tokenizer().vocab_size());
  config.preset = "tiny";
  config.n_layer = 2;
  config.n_head = 2;
  config.n_embd = 8;
  config.block_size = 8;
  config.positional = positional;
  return config;
}

}  // namespace tg::testing
