#include "tinygpt/serve/engine.h"

#include <algorithm>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/view.h"

namespace tg::serve {

const char* finish_reason_name(FinishReason reason) {
  switch (reason) {
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::TimedOut: return "timeout";
    case FinishReason::ShutDown: return "shutdown";
    case FinishReason::Failed: return "error";
  }
  return "error";
}

// ---- TokenStream ----

std::optional<TokenStream::Event> TokenStream::next(Clock::time_point until) {
  std::unique_lock lock(mutex_);
  if (!ready_.wait_until(lock, until, [&] { return !events_.empty() || end_; })) return std::nullopt;
  if (!events_.empty()) {
    Event event = events_.front();
    events_.pop_front();
    return event;
  }
  return end_;
}

void TokenStream::cancel() {
  std::lock_guard lock(mutex_);
  cancelled_ = true;
}

bool TokenStream::cancelled() const {
  std::lock_guard lock(mutex_);
  return cancelled_;
}

void TokenStream::push(Event event) {
  {
    std::lock_guard lock(mutex_);
    if (end_) return;
    if (event.finished)
      end_ = event;
    else
      events_.push_back(event);
  }
  ready_.notify_all();
}

// ---- Engine ----

struct Engine::Sequence {
  CompletionRequest request;
  std::shared_ptr<TokenStream> stream;
  std::vector<int64_t> context;       // the prompt and the tokens chosen so far
  std::vector<nn::KVCache> caches;    // one per layer, room for `capacity` positions
  int64_t capacity = 0;               // prompt + max_new_tokens, within the context
  int64_t kv_bytes = 0;
  int64_t generated = 0;
  Generator generator{0};
  bool ended = false;
};

Engine::Engine(GPT& model, EngineOptions options) : model_(model), options_(options) {
  check(options_.max_sequences >= 1, "serve: at most ", options_.max_sequences, " sequences at once; give at least 1");
  check(options_.max_queued >= 0, "serve: a queue of ", options_.max_queued, " requests; give 0 or more");
  check(kv_bytes_for(1) <= options_.max_kv_bytes, "serve: a KV memory bound of ", options_.max_kv_bytes,
        " bytes cannot hold even one position (", kv_bytes_for(1), " bytes)");
  model_.eval();
  thread_ = std::thread([this] { run(); });
}

Engine::~Engine() { shutdown(std::chrono::milliseconds(0)); }

int64_t Engine::kv_bytes_for(int64_t positions) const {
  const GPTConfig& config = model_.config();
  // keys and values, float32, every layer
  return 2 * config.n_layer * config.kv_heads() * config.head_size() * positions * static_cast<int64_t>(sizeof(float));
}

EngineStats Engine::stats() const {
  std::lock_guard lock(mutex_);
  EngineStats stats = stats_;
  stats.queued = static_cast<int64_t>(queued_.size());
  return stats;
}

std::shared_ptr<TokenStream> Engine::submit(CompletionRequest request) {
  const int64_t vocab_size = model_.config().vocab_size, prompt_length = static_cast<int64_t>(request.prompt.size());
  check(!request.prompt.empty(), "the prompt is empty; give at least one token");
  for (size_t position = 0; position < request.prompt.size(); ++position)
    check(request.prompt[position] >= 0 && request.prompt[position] < vocab_size, "prompt token ",
          request.prompt[position], " at position ", position, " is outside the vocabulary [0, ", vocab_size, ")");
  check(prompt_length < context(), "the prompt has ", prompt_length, " tokens; the model's context is ", context(),
        " tokens, and the prompt must leave room for at least one new token");
  check(request.max_new_tokens >= 1, "max_new_tokens is ", request.max_new_tokens, "; give at least 1");
  request.sampling.validate();

  auto sequence = std::make_unique<Sequence>();
  sequence->capacity = std::min(context(), prompt_length + request.max_new_tokens);
  sequence->kv_bytes = kv_bytes_for(sequence->capacity);
  check(sequence->kv_bytes <= options_.max_kv_bytes, "the prompt and max_tokens need ", sequence->capacity,
        " positions of KV cache (", sequence->kv_bytes >> 20, " MiB), more than the server's whole bound of ",
        options_.max_kv_bytes >> 20, " MiB; ask for fewer tokens");
  sequence->generator = Generator(request.seed);
  sequence->context = request.prompt;
  sequence->stream = std::shared_ptr<TokenStream>(new TokenStream(prompt_length));
  sequence->request = std::move(request);
  std::shared_ptr<TokenStream> stream = sequence->stream;
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw EngineBusy("the server is shutting down");
    if (static_cast<int64_t>(queued_.size()) >= options_.max_queued)
      throw EngineBusy("the server is busy: " + std::to_string(options_.max_sequences) + " sequences are decoding and " +
                       std::to_string(queued_.size()) + " requests wait; try again shortly");
    queued_.push_back(std::move(sequence));
  }
  work_.notify_one();
  return stream;
}

void Engine::shutdown(std::chrono::milliseconds grace) {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      stop_by_ = Clock::now() + grace;
    } else {
      stop_by_ = std::min(stop_by_, Clock::now() + grace);
    }
  }
  work_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void Engine::run_on_model(std::function<void(GPT&)> task) {
  ModelTask waiting{std::move(task), {}};
  std::future<void> done = waiting.done.get_future();
  {
    std::lock_guard lock(mutex_);
    if (stopping_) throw EngineBusy("the server is shutting down");
    if (static_cast<int64_t>(tasks_.size()) >= options_.max_queued)
      throw EngineBusy("the server is busy: " + std::to_string(tasks_.size()) + " requests wait for the model; try again shortly");
    tasks_.push_back(&waiting);
  }
  work_.notify_one();
  done.get();
}

void Engine::run_model_tasks() {
  std::deque<ModelTask*> tasks;
  {
    std::lock_guard lock(mutex_);
    tasks.swap(tasks_);
  }
  for (ModelTask* waiting : tasks) {
    try {
      waiting->task(model_);
      waiting->done.set_value();
    } catch (...) {
      waiting->done.set_exception(std::current_exception());
    }
  }
}

void Engine::finish(Sequence& sequence, FinishReason reason, std::string error) {
  if (sequence.ended) return;
  sequence.ended = true;
  {
    std::lock_guard lock(mutex_);  // counted before the caller can see the end
    ++stats_.completed;
  }
  TokenStream::Event event;
  event.finished = true;
  event.reason = reason;
  event.error = std::move(error);
  sequence.stream->push(event);
}

void Engine::run() {
  NoGradGuard no_grad;
  while (true) {
    {
      std::unique_lock lock(mutex_);
      work_.wait(lock, [&] { return stopping_ || !queued_.empty() || !active_.empty() || !tasks_.empty(); });
      if (stopping_) {
        for (ModelTask* waiting : tasks_)
          waiting->done.set_exception(std::make_exception_ptr(EngineBusy("the server is shutting down")));
        tasks_.clear();
        for (auto& sequence : queued_) {
          sequence->ended = true;
          ++stats_.completed;
          sequence->stream->push({true, -1, FinishReason::ShutDown, ""});
        }
        queued_.clear();
        if (active_.empty()) return;
        if (Clock::now() >= stop_by_) {
          lock.unlock();
          for (auto& sequence : active_) finish(*sequence, FinishReason::ShutDown);
          active_.clear();
          return;
        }
      }
    }
    adapt_threads_to_load();  // tensor/runtime/thread_governor.h: between steps, as generate() does
    run_model_tasks();
    admit_waiting();
    if (!active_.empty()) step();
    // The ended leave, their caches with them.
    std::erase_if(active_, [](const std::unique_ptr<Sequence>& sequence) { return sequence->ended; });
    std::lock_guard lock(mutex_);
    stats_.active = static_cast<int64_t>(active_.size());
    stats_.kv_bytes = 0;
    for (const auto& sequence : active_) stats_.kv_bytes += sequence->kv_bytes;
  }
}

void Engine::admit_waiting() {
  while (true) {
    std::unique_ptr<Sequence> sequence;
    {
      std::lock_guard lock(mutex_);
      if (queued_.empty() || stopping_ || static_cast<int64_t>(active_.size()) >= options_.max_sequences) return;
      int64_t kv_bytes = 0;
      for (const auto& admitted : active_) kv_bytes += admitted->kv_bytes;
      if (kv_bytes + queued_.front()->kv_bytes > options_.max_kv_bytes) return;  // waits for memory, in order
      sequence = std::move(queued_.front());
      queued_.pop_front();
    }
    if (sequence->stream->cancelled()) {
      finish(*sequence, FinishReason::Cancelled);
      continue;
    }
    if (Clock::now() >= sequence->request.deadline) {
      finish(*sequence, FinishReason::TimedOut);
      continue;
    }
    prefill(*sequence);
    if (!sequence->ended) active_.push_back(std::move(sequence));
  }
}

void Engine::prefill(Sequence& sequence) {
  try {
    sequence.caches = model_.make_caches(1, sequence.capacity);
    const std::vector<int64_t>& prompt = sequence.request.prompt;
    const Tensor ids = from_vector(prompt, {1, static_cast<int64_t>(prompt.size())});
    const Tensor logits = model_.forward_cached(ids, sequence.caches, GPT::LogitPositions::Last);  // (1, 1, V)
    accept(sequence, choose(sequence, raw::select(raw::select(logits, 0, 0), 0, logits.size(1) - 1).to_vector<float>()));
  } catch (const std::exception& error) {
    finish(sequence, FinishReason::Failed, error.what());
  }
}

void Engine::step() {
  std::vector<Sequence*> stepping;
  for (auto& sequence : active_) {
    if (sequence->ended) continue;
    if (sequence->stream->cancelled()) {
      finish(*sequence, FinishReason::Cancelled);
      continue;
    }
    if (Clock::now() >= sequence->request.deadline) {
      finish(*sequence, FinishReason::TimedOut);
      continue;
    }
    stepping.push_back(sequence.get());
  }
  if (stepping.empty()) return;
  try {
    std::vector<int64_t> ids;
    std::vector<std::vector<nn::KVCache>*> caches;
    for (Sequence* sequence : stepping) {
      ids.push_back(sequence->context.back());
      caches.push_back(&sequence->caches);
    }
    const Tensor logits = model_.decode_batch(ids, caches);  // (B, V)
    const int64_t vocab_size = logits.size(1), batch = static_cast<int64_t>(stepping.size());
    const float* rows = logits.data<float>();
    // Each sequence draws from its own generator, so they can choose side by side: sampling
    // from V = 50,257 logits (a sort) takes milliseconds, a sizeable part of a batched step.
    std::vector<int64_t> chosen(batch, -1);
    std::vector<std::string> errors(batch);
#pragma omp parallel for schedule(dynamic, 1) if (batch > 1)
    for (int64_t row = 0; row < batch; ++row) {
      try {
        chosen[row] = choose(*stepping[row], std::vector<float>(rows + row * vocab_size, rows + (row + 1) * vocab_size));
      } catch (const std::exception& error) {
        errors[row] = error.what();
      }
    }
    for (int64_t row = 0; row < batch; ++row) {
      if (errors[row].empty())
        accept(*stepping[row], chosen[row]);
      else
        finish(*stepping[row], FinishReason::Failed, errors[row]);
    }
  } catch (const std::exception& error) {
    for (Sequence* sequence : stepping) finish(*sequence, FinishReason::Failed, error.what());
  }
  std::lock_guard lock(mutex_);
  ++stats_.steps;
}

int64_t Engine::choose(Sequence& sequence, std::vector<float> logits) const {
  return choose_next_token(std::move(logits), sequence.context, sequence.request.sampling, sequence.generator);
}

void Engine::accept(Sequence& sequence, int64_t id) {
  const auto& stop_ids = sequence.request.stop_ids;
  if (std::find(stop_ids.begin(), stop_ids.end(), id) != stop_ids.end()) {
    finish(sequence, FinishReason::Stop);
    return;
  }
  sequence.context.push_back(id);
  ++sequence.generated;
  {
    std::lock_guard lock(mutex_);
    ++stats_.tokens;
  }
  sequence.stream->push({false, id, FinishReason::Stop, ""});
  // The token just chosen still has to go through the model: it needs a free position.
  if (sequence.generated >= sequence.request.max_new_tokens ||
      static_cast<int64_t>(sequence.context.size()) >= sequence.capacity)
    finish(sequence, FinishReason::Length);
}

}  // namespace tg::serve
