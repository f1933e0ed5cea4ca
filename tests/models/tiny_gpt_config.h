// The tiny GPTs the tests build: two blocks with cpu-small's switches (tanh GELU,
// biases, tied head, no dropout) and small shapes, so that a forward, a backward
// or a training step takes well under a millisecond.
#pragma once
#include <cstdint>
#include <string>

#include "tinygpt/models/gpt_config.h"

namespace tg::testing {

struct TinyGPT {
  int64_t vocab_size = 0;  // V: always given (0 throws, as cpu-small takes V from a tokenizer)
  int64_t n_embd = 8;      // C
  int64_t n_head = 2;      // NH
  int64_t block_size = 8;
  PositionalEncoding positional = PositionalEncoding::Learned;
  std::string preset = "tiny";  // the name the config carries
};

inline GPTConfig tiny_gpt_config(const TinyGPT& tiny) {
  GPTConfig config = GPTConfig::preset_named("cpu-small", tiny.vocab_size);
  config.preset = tiny.preset;
  config.n_layer = 2;
  config.n_head = tiny.n_head;
  config.n_embd = tiny.n_embd;
  config.block_size = tiny.block_size;
  config.positional = tiny.positional;
  return config;
}

}  // namespace tg::testing
