// Text generation: the model predicts one token at a time, each new token is
// appended to the context, and the next prediction reads the longer context.
//
// With the KV cache (the default), each step runs the model on the new token
// only: the keys and values of the earlier positions are kept per layer
// (GPT::forward_cached), so a step costs O(T) attention instead of re-running
// O(T) positions. Without it (--no-cache), each step re-runs the whole window:
// slower, and the plain reference the cached path is tested against.
//
// The context length: the model sees at most block_size tokens. Once the text
// is longer, it sees the last block_size (a sliding window). The cached keys
// carry their absolute positions (learned or sinusoidal embeddings, RoPE
// rotations), so the window cannot slide inside the cache: from that point the
// cached path re-reads the whole window for every token, exactly as --no-cache
// does, and both give the same tokens.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "tinygpt/models/gpt.h"
#include "tinygpt/models/sampling.h"

namespace tg {

struct GenerationOptions {
  int64_t max_new_tokens = 200;
  SamplingOptions sampling;
  uint64_t seed = 0;      // of the generator the samples are drawn with
  bool use_cache = true;  // false: re-run the whole window for every token
  // Generation ends early when it picks one of these (GPT-2's <|endoftext|>);
  // the stop id is not part of the result and not passed to on_token.
  std::vector<int64_t> stop_ids;
};

// Each new token, as it is chosen; returning false ends the generation after it.
using TokenCallback = std::function<bool(int64_t id)>;
using NoteCallback = std::function<void(const std::string& note)>;  // diagnostics (the CLI prints them on stderr)

// The new token ids (not the prompt) continuing `prompt` (ids in [0, V), at
// least one). Runs in eval mode without recording a graph, and restores the
// model's train/eval mode afterwards.
std::vector<int64_t> generate(GPT& model, const std::vector<int64_t>& prompt, const GenerationOptions& options,
                              const TokenCallback& on_token = {}, const NoteCallback& on_note = {});

}  // namespace tg
