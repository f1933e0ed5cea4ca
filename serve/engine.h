// The serving engine: one model shared by every request, one thread that runs it.
//
// Requests arrive from many HTTP threads (serve/http_server.h) and wait in a
// bounded queue. The engine's thread admits them between steps while there is
// room (at most max_sequences at once, and their KV caches within the memory
// bound), runs each new prompt through the model once (prefill), then advances
// every admitted sequence by one token per step together (GPT::decode_batch:
// each weight is read once per step for all of them). A sequence leaves when it
// picks a stop id, reaches its max_new_tokens or the context, its deadline
// passes, or its client cancels; the next queued request takes its place.
//
//   Engine engine(model, options);
//   std::shared_ptr<TokenStream> stream = engine.submit(request);   // throws EngineBusy when the queue is full
//   while (auto event = stream->next()) { ... event->id ... }        // until the end, with its reason
//
// A sequence's tokens are exactly those tinygpt sample gives for the same ids,
// options and seed: the prefill is the same call, decode_batch gives each row
// the fused decode step's logits bit for bit, and each request draws from its
// own generator.
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "tinygpt/models/gpt.h"
#include "tinygpt/models/sampling.h"
#include "tinygpt/tensor/error.h"

namespace tg::serve {

using Clock = std::chrono::steady_clock;

struct CompletionRequest {
  std::vector<int64_t> prompt;  // at least one id, all in the vocabulary, shorter than the context
  int64_t max_new_tokens = 16;  // >= 1; generation also ends at the model's context
  SamplingOptions sampling;
  uint64_t seed = 0;
  std::vector<int64_t> stop_ids;  // ending ids; not passed on as tokens
  Clock::time_point deadline = Clock::time_point::max();
};

// Why a sequence ended, in OpenAI's words where it has them.
enum class FinishReason {
  Stop,       // a stop id ("stop")
  Length,     // max_new_tokens or the context ("length")
  Cancelled,  // TokenStream::cancel (a client that went away, or a stop string found by the caller)
  TimedOut,   // the deadline passed
  ShutDown,   // the engine stopped before the sequence ended
  Failed,     // the model threw (message in TokenStream::Event::error)
};
const char* finish_reason_name(FinishReason reason);  // "stop", "length", "cancelled", "timeout", "shutdown", "error"

// One request's tokens, from the engine's thread to the caller's. Thread-safe.
class TokenStream {
 public:
  struct Event {
    bool finished = false;  // false: a token; true: the end (no token)
    int64_t id = -1;
    FinishReason reason = FinishReason::Stop;
    std::string error;  // Failed only
  };
  // The next event, waiting for it until `until`; nullopt when nothing came by then.
  // After the finishing event, every call returns it again.
  std::optional<Event> next(Clock::time_point until = Clock::time_point::max());
  // Asks the engine to drop the sequence (it finishes with Cancelled at its next step).
  void cancel();
  bool cancelled() const;
  int64_t prompt_tokens() const { return prompt_tokens_; }

 private:
  friend class Engine;
  explicit TokenStream(int64_t prompt_tokens) : prompt_tokens_(prompt_tokens) {}
  void push(Event event);

  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Event> events_;
  std::optional<Event> end_;
  bool cancelled_ = false;
  const int64_t prompt_tokens_;
};

// The queue is full, or the server is shutting down: try again later (HTTP 503).
struct EngineBusy : Error {
  using Error::Error;
};

struct EngineOptions {
  int64_t max_sequences = 8;  // decoding at once, in one batched step
  int64_t max_queued = 64;    // waiting for a place; one more is refused (EngineBusy)
  // The KV caches of the admitted sequences together, at most this many bytes;
  // a sequence's cache holds its prompt and max_new_tokens (within the context).
  int64_t max_kv_bytes = int64_t{2} << 30;
};

struct EngineStats {
  int64_t active = 0, queued = 0;
  int64_t kv_bytes = 0;             // of the admitted sequences' caches
  int64_t steps = 0;                // batched decode steps run
  int64_t tokens = 0;               // generated, all sequences together
  int64_t completed = 0;            // sequences ended, for any reason
};

class Engine {
 public:
  // Starts the engine's thread. The model must stay alive and untouched by anyone else while the engine runs.
  Engine(GPT& model, EngineOptions options);
  ~Engine();  // shutdown(0) if not done
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Checks the request (throws tg::Error saying what is wrong: an empty prompt, an id outside the
  // vocabulary, a prompt that leaves no room in the context, a cache larger than the whole KV bound)
  // and queues it. Throws EngineBusy when max_queued requests wait already or the engine is stopping.
  std::shared_ptr<TokenStream> submit(CompletionRequest request);

  // Stops admitting; sequences in flight go on until `grace` has passed, then end with ShutDown,
  // as do queued ones at once. Returns when the engine's thread has ended.
  void shutdown(std::chrono::milliseconds grace);

  // Runs `task` on the engine's thread between two steps, the model to itself, and
  // returns once it has run, rethrowing what it threw. For work beside decoding
  // that reads the model (the live step-through); the sequences decoding wait for
  // it. Throws EngineBusy when max_queued tasks wait already or the engine is stopping.
  void run_on_model(std::function<void(GPT&)> task);

  // Bytes of KV cache a sequence of `positions` positions takes.
  int64_t kv_bytes_for(int64_t positions) const;
  int64_t context() const { return model_.config().block_size; }
  const GPTConfig& config() const { return model_.config(); }
  const EngineOptions& options() const { return options_; }
  EngineStats stats() const;

 private:
  struct Sequence;
  struct ModelTask {
    std::function<void(GPT&)> task;
    std::promise<void> done;
  };
  void run();
  void run_model_tasks();
  void admit_waiting();
  void prefill(Sequence& sequence);
  void step();
  // The sequence's next token from its logits (V), drawn from its own generator (safe side by side).
  int64_t choose(Sequence& sequence, std::vector<float> logits) const;
  // Hands the token over, or ends the sequence on a stop id, its length or its context.
  void accept(Sequence& sequence, int64_t id);
  void finish(Sequence& sequence, FinishReason reason, std::string error = "");

  GPT& model_;
  const EngineOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable work_;
  std::deque<std::unique_ptr<Sequence>> queued_;      // guarded by mutex_
  std::vector<std::unique_ptr<Sequence>> active_;     // the engine's thread only
  std::deque<ModelTask*> tasks_;                      // guarded by mutex_; each owned by its caller
  bool stopping_ = false;                             // guarded by mutex_
  Clock::time_point stop_by_ = Clock::time_point::max();
  EngineStats stats_;                                 // guarded by mutex_
  std::thread thread_;
};

}  // namespace tg::serve
