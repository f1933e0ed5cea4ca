#include "tinygpt/models/generate.h"

#include <algorithm>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// logits (1, T, V), or (1, 1, V) when only the last position was asked for -> its V logits.
std::vector<float> last_position_logits(const Tensor& logits) {
  return raw::select(raw::select(logits, 0, 0), 0, logits.size(1) - 1).to_vector<float>();
}

// ids [begin, end) of `context` as a (1, Tnew) int64 tensor.
Tensor id_row(const std::vector<int64_t>& context, size_t begin, size_t end) {
  std::vector<int64_t> ids(context.begin() + static_cast<std::ptrdiff_t>(begin),
                           context.begin() + static_cast<std::ptrdiff_t>(end));
  return from_vector(ids, {1, static_cast<int64_t>(ids.size())});
}

// Feeds the model what it has not seen yet and returns the logits of the last
// position. Keeps the KV caches when used; otherwise re-runs the window.
class NextTokenLogits {
 public:
  // The caches hold `longest` positions, at most the context: a model whose context is 131,072
  // tokens (Llama 3.2) keeps a cache the size of what this generation can reach, not of that.
  NextTokenLogits(GPT& model, bool use_cache, const NoteCallback& on_note, int64_t longest)
      : model_(model), block_size_(model.config().block_size), use_cache_(use_cache), on_note_(on_note) {
    if (use_cache_) caches_ = model_.make_caches(1, std::min(block_size_, longest));
  }

  std::vector<float> operator()(const std::vector<int64_t>& context) {
    const size_t window = std::min(context.size(), static_cast<size_t>(block_size_));
    if (context.size() > window) note_window_full(context.size());
    if (!use_cache_)
      return last_position_logits(
          model_.forward(id_row(context, context.size() - window, context.size()), GPT::LogitPositions::Last));

    const size_t unseen = context.size() - fed_;
    if (caches_[0].length + static_cast<int64_t>(unseen) > caches_[0].keys.size(2)) {
      // The cache is full: start it again from the last block_size tokens.
      for (nn::KVCache& cache : caches_) cache.length = 0;
      fed_ = context.size() - window;
    }
    Tensor logits = model_.forward_cached(id_row(context, fed_, context.size()), caches_, GPT::LogitPositions::Last);
    fed_ = context.size();
    return last_position_logits(logits);
  }

 private:
  void note_window_full(size_t context_size) {
    if (noted_ || !on_note_) return;
    noted_ = true;
    on_note_("the text (" + std::to_string(context_size) + " tokens) is longer than the context length of " +
             std::to_string(block_size_) + ": the model sees the last " + std::to_string(block_size_) +
             " tokens from here on" + (use_cache_ ? ", re-reading them for every new token" : ""));
  }

  GPT& model_;
  int64_t block_size_;
  bool use_cache_;
  const NoteCallback& on_note_;
  std::vector<nn::KVCache> caches_;  // one per layer, when use_cache_
  size_t fed_ = 0;                   // context[0, fed_) is in the caches
  bool noted_ = false;
};

}  // namespace

std::vector<int64_t> generate(GPT& model, const std::vector<int64_t>& prompt, const GenerationOptions& options,
                              const TokenCallback& on_token, const NoteCallback& on_note) {
  const int64_t vocab_size = model.config().vocab_size;
  check(!prompt.empty(), "generate: the prompt is empty; give at least one token");
  check(options.max_new_tokens >= 0, "generate: the number of tokens to generate (", options.max_new_tokens,
        ") must be >= 0");
  for (size_t position = 0; position < prompt.size(); ++position) {
    check(prompt[position] >= 0 && prompt[position] < vocab_size, "generate: prompt token ", prompt[position],
          " at position ", position, " is outside the vocabulary [0, ", vocab_size, ")");
  }
  options.sampling.validate();

  NoGradGuard no_grad;
  nn::EvalModeGuard eval_mode(model);
  Generator generator(options.seed);
  NextTokenLogits next_token_logits(model, options.use_cache, on_note,
                                    static_cast<int64_t>(prompt.size()) + std::max<int64_t>(options.max_new_tokens, 1));
  std::vector<int64_t> context = prompt;
  for (int64_t step = 0; step < options.max_new_tokens; ++step) {
    adapt_threads_to_load();  // tensor/runtime/thread_governor.h
    const int64_t id = choose_next_token(next_token_logits(context), context, options.sampling, generator);
    if (std::find(options.stop_ids.begin(), options.stop_ids.end(), id) != options.stop_ids.end()) break;
    context.push_back(id);
    if (on_token && !on_token(id)) break;
  }
  return std::vector<int64_t>(context.begin() + static_cast<std::ptrdiff_t>(prompt.size()), context.end());
}

}  // namespace tg
