// Answers from a running engine on a tiny char-level GPT: the whole answer and the
// streamed one give the tokens' text, both cut at a stop text, and a stream whose
// client stops taking data is cancelled.
#include <doctest/doctest.h>

#include <httplib.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "models/tiny_gpt_config.h"
#include "tinygpt/serve/answers.h"

using namespace tg::serve;
using nlohmann::json;

namespace {

struct RunningEngine {
  tg::tokenizer::TextTokenizer tokenizer{tg::tokenizer::CharTokenizer({U'a', U'b', U'c', U'd', U' ', U'\n'})};
  tg::GPT model{tg::testing::tiny_gpt_config({.vocab_size = 6, .block_size = 64}), 11};
  Engine engine{model, EngineOptions{}};  // last: stopped before the model goes
};

ApiRequest greedy_request(int64_t max_new_tokens, std::vector<std::string> stop_texts = {}) {
  ApiRequest request;
  request.endpoint = Endpoint::Completions;
  request.completion.prompt = {0, 1, 2};
  request.completion.max_new_tokens = max_new_tokens;
  request.completion.sampling.greedy = true;
  request.stop_texts = std::move(stop_texts);
  return request;
}

// The text the engine's tokens make, read straight from the stream.
std::string engine_text(RunningEngine& running, int64_t max_new_tokens) {
  const auto stream = running.engine.submit(greedy_request(max_new_tokens).completion);
  std::vector<int64_t> ids;
  for (auto event = stream->next(); !event->finished; event = stream->next()) ids.push_back(event->id);
  return running.tokenizer.decode(ids);
}

// A sink that keeps what is written, or refuses every write after the first `accepted`.
struct Sink {
  httplib::DataSink sink;
  std::string written;
  bool done = false;
  explicit Sink(size_t accepted = SIZE_MAX) {
    sink.write = [this, accepted](const char* data, size_t length) {
      if (writes++ >= accepted) return false;
      written.append(data, length);
      return true;
    };
    sink.done = [this] { done = true; };
    sink.is_writable = [] { return true; };
  }
  size_t writes = 0;
};

// The text and finish reason of a stream's events ("data: {...}\n\n" ... "data: [DONE]\n\n").
std::pair<std::string, std::string> streamed_text(const std::string& events) {
  std::string text, finish;
  for (size_t start = 0; start < events.size();) {
    const size_t end = events.find("\n\n", start);
    REQUIRE(events.compare(start, 6, "data: ") == 0);
    const std::string data = events.substr(start + 6, end - start - 6);
    start = end + 2;
    if (data == "[DONE]") {
      CHECK(start == events.size());
      break;
    }
    const json chunk = json::parse(data);
    for (const json& choice : chunk["choices"]) {
      text += choice["text"].get<std::string>();
      if (!choice["finish_reason"].is_null()) finish = choice["finish_reason"];
    }
  }
  return {text, finish};
}

}  // namespace

TEST_CASE("whole and streamed answers give the engine's text, cut at a stop text") {
  RunningEngine running;
  const std::string expected = engine_text(running, 40);
  REQUIRE(expected.size() == 40);
  const AnswerHeader header = new_answer_header(Endpoint::Completions, "tiny");

  const ApiRequest whole_request = greedy_request(40);
  const json whole = whole_answer_of(whole_request, *running.engine.submit(whole_request.completion), running.tokenizer, header);
  CHECK(whole["choices"][0]["text"] == expected);
  CHECK(whole["choices"][0]["finish_reason"] == "length");
  CHECK(whole["usage"]["completion_tokens"] == 40);
  CHECK(whole["usage"]["prompt_tokens"] == 3);

  Sink sink;
  const ApiRequest stream_request = greedy_request(40);
  CHECK(stream_answer(stream_request, *running.engine.submit(stream_request.completion), running.tokenizer, header,
                      sink.sink) == StreamEnd::Complete);
  CHECK(sink.done);
  CHECK(streamed_text(sink.written) == std::pair<std::string, std::string>{expected, "length"});

  // A stop text from the middle of the text: both end before its first occurrence.
  const std::string stop = expected.substr(20, 3);
  const std::string before_stop = expected.substr(0, expected.find(stop));
  const ApiRequest stopped_request = greedy_request(40, {stop});
  const json stopped = whole_answer_of(stopped_request, *running.engine.submit(stopped_request.completion),
                                       running.tokenizer, header);
  CHECK(stopped["choices"][0]["text"] == before_stop);
  CHECK(stopped["choices"][0]["finish_reason"] == "stop");
  Sink stopped_sink;
  CHECK(stream_answer(stopped_request, *running.engine.submit(stopped_request.completion), running.tokenizer, header,
                      stopped_sink.sink) == StreamEnd::Complete);
  CHECK(streamed_text(stopped_sink.written) == std::pair<std::string, std::string>{before_stop, "stop"});
}

TEST_CASE("a stream whose client stops taking data is cancelled") {
  RunningEngine running;
  const ApiRequest request = greedy_request(60);
  const auto stream = running.engine.submit(request.completion);
  Sink refusing(2);
  CHECK(stream_answer(request, *stream, running.tokenizer, new_answer_header(Endpoint::Completions, "tiny"),
                      refusing.sink) == StreamEnd::ClientGone);
  CHECK(stream->cancelled());
  CHECK_FALSE(refusing.done);
  CHECK(refusing.written.find("[DONE]") == std::string::npos);
}
