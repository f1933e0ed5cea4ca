// A conversation with a model, turn after turn, keeping the KV cache between
// turns: each turn's prompt is the whole conversation rendered again (chat
// templates render the history, not just the new message), and only the ids
// past what the cache already holds are run through the model.
//
// A template may render an earlier turn differently once the conversation has
// moved on (Qwen3 drops an answered turn's <think> block): the cache is then cut
// back to the longest prefix the new ids share with what it holds, and the rest
// is run again. The tokens are exactly those of a fresh run on the same ids.
//
//   ChatSession session(model, 4096);
//   session.reply(render(conversation), options, on_token);   // turn 1
//   session.reply(render(conversation + answer + question), options, on_token);  // turn 2: reuses turn 1
#pragma once
#include <cstdint>
#include <vector>

#include "tinygpt/models/generate.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/attention.h"

namespace tg {

class ChatSession {
 public:
  // `context` positions of cache (at most the model's block_size).
  ChatSession(GPT& model, int64_t context);

  // The reply's ids to `prompt` (the conversation so far, ending with the
  // generation prompt), until a stop id (not included) or max_new_tokens.
  // Throws tg::Error when the prompt and max_new_tokens cannot fit the context.
  std::vector<int64_t> reply(const std::vector<int64_t>& prompt, const GenerationOptions& options,
                             const TokenCallback& on_token = {});

  // Forgets the conversation (/reset).
  void reset();
  // Positions held in the cache, and how many of the last prompt were reused from it.
  int64_t cached_length() const { return static_cast<int64_t>(cached_.size()); }
  int64_t reused_last_turn() const { return reused_; }
  int64_t context() const { return context_; }

 private:
  // Runs ids[from, ...) through the model; returns the last position's logits.
  std::vector<float> feed(const std::vector<int64_t>& ids, size_t from);

  GPT& model_;
  int64_t context_;
  std::vector<nn::KVCache> caches_;
  std::vector<int64_t> cached_;  // the ids whose keys and values the caches hold, in order
  int64_t reused_ = 0;
  uint64_t turns_ = 0;
};

}  // namespace tg
