#include "tinygpt/models/chat_session.h"

#include <algorithm>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/sampling.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/view.h"

namespace tg {

ChatSession::ChatSession(GPT& model, int64_t context) : model_(model), context_(std::min(context, model.config().block_size)) {
  check(context_ > 0, "ChatSession: the context must be positive, got ", context);
  caches_ = model_.make_caches(1, context_);
}

void ChatSession::reset() {
  cached_.clear();
  for (nn::KVCache& cache : caches_) cache.length = 0;
}

std::vector<float> ChatSession::feed(const std::vector<int64_t>& ids, size_t from) {
  const std::vector<int64_t> fresh(ids.begin() + static_cast<std::ptrdiff_t>(from), ids.end());
  const Tensor logits = model_.forward_cached(from_vector(fresh, {1, static_cast<int64_t>(fresh.size())}), caches_,
                                              GPT::LogitPositions::Last);  // (1, 1, V)
  cached_.insert(cached_.end(), fresh.begin(), fresh.end());
  return raw::select(raw::select(logits, 0, 0), 0, 0).to_vector<float>();
}

std::vector<int64_t> ChatSession::reply(const std::vector<int64_t>& prompt, const GenerationOptions& options,
                                        const TokenCallback& on_token) {
  check(!prompt.empty(), "ChatSession: the prompt is empty");
  check(static_cast<int64_t>(prompt.size()) + options.max_new_tokens <= context_, "chat: the conversation (",
        prompt.size(), " tokens) and the reply (up to ", options.max_new_tokens, ") do not fit the context of ", context_,
        " tokens; start again with /reset or a larger --context");
  const int64_t vocab_size = model_.config().vocab_size;
  for (int64_t id : prompt)
    check(id >= 0 && id < vocab_size, "ChatSession: token ", id, " is outside the vocabulary [0, ", vocab_size, ")");
  options.sampling.validate();
  NoGradGuard no_grad;
  nn::EvalModeGuard eval_mode(model_);

  // Keep the longest prefix the cache shares with the prompt, less one position: the last prompt
  // position must run to give the logits of the first new token.
  size_t shared = 0;
  while (shared < cached_.size() && shared < prompt.size() && cached_[shared] == prompt[shared]) ++shared;
  shared = std::min(shared, prompt.size() - 1);
  cached_.resize(shared);
  for (nn::KVCache& cache : caches_) cache.length = static_cast<int64_t>(shared);
  reused_ = static_cast<int64_t>(shared);

  Generator generator(options.seed + turns_++);
  std::vector<int64_t> context = prompt;
  std::vector<float> logits = feed(prompt, shared);
  std::vector<int64_t> answer;
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    adapt_threads_to_load();  // tensor/runtime/thread_governor.h
    const int64_t id = choose_next_token(std::move(logits), context, options.sampling, generator);
    if (std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end()) {
      // The stop id (an end of turn) is part of the conversation the template will render next turn.
      context.push_back(id);
      if (static_cast<int64_t>(context.size()) <= context_) feed(context, context.size() - 1);
      break;
    }
    answer.push_back(id);
    context.push_back(id);
    if (on_token && !on_token(id)) break;
    if (step + 1 < options.max_new_tokens) logits = feed(context, context.size() - 1);
  }
  return answer;
}

}  // namespace tg
