#include "tinygpt/serve/answers.h"

#include <httplib.h>

#include "tinygpt/serve/stop_texts.h"

namespace tg::serve {

namespace {

// The reply's text as tokens arrive: decoded (an incomplete character waits for
// its next bytes), then passed through the stop texts.
class ReplyText {
 public:
  ReplyText(const tokenizer::TextTokenizer& tokenizer, const std::vector<std::string>& stop_texts)
      : decoder_(tokenizer), stops_(stop_texts) {}

  std::string add(int64_t id) {
    ++tokens_;
    return stops_.push(decoder_.push(id));
  }
  // At the end of the stream: what the decoder and the stop texts held back.
  std::string end() {
    std::string rest = stops_.push(decoder_.finish());
    return rest + stops_.finish();
  }
  bool stop_found() const { return stops_.found(); }
  int64_t tokens() const { return tokens_; }

 private:
  tokenizer::StreamingDecoder decoder_;
  StopTexts stops_;
  int64_t tokens_ = 0;
};

ApiError failure(const TokenStream::Event& end) {
  return ApiError(500, "the model failed while generating: " + end.error, "", "", "server_error");
}

ApiError shut_down() {
  return ApiError(503, "the server is shutting down; the request was not answered", "", "", "server_error");
}

}  // namespace

nlohmann::json whole_answer_of(const ApiRequest& request, TokenStream& stream, const tokenizer::TextTokenizer& tokenizer,
                               const AnswerHeader& header) {
  ReplyText reply(tokenizer, request.stop_texts);
  std::string text;
  const char* finish_reason = "stop";
  while (true) {
    const TokenStream::Event event = *stream.next();
    if (!event.finished) {
      text += reply.add(event.id);
      if (reply.stop_found()) {
        stream.cancel();  // the engine drops the sequence at its next step
        break;
      }
      continue;
    }
    if (event.reason == FinishReason::Failed) throw failure(event);
    if (event.reason == FinishReason::ShutDown && reply.tokens() == 0) throw shut_down();
    text += reply.end();
    finish_reason = openai_finish_reason(event.reason);
    break;
  }
  return whole_answer(request.endpoint, header, text, finish_reason, {stream.prompt_tokens(), reply.tokens()});
}

StreamEnd stream_answer(const ApiRequest& request, TokenStream& stream, const tokenizer::TextTokenizer& tokenizer,
                   const AnswerHeader& header, httplib::DataSink& sink) {
  const auto send = [&](const std::string& data) {
    if (sink.write(data.data(), data.size())) return true;
    stream.cancel();
    return false;
  };
  const Endpoint endpoint = request.endpoint;
  // OpenAI's chat streams open with the role, and no text yet.
  if (endpoint == Endpoint::ChatCompletions && !send(event(text_chunk(endpoint, header, "", /*first=*/true))))
    return StreamEnd::ClientGone;
  ReplyText reply(tokenizer, request.stop_texts);
  const char* finish_reason = "stop";
  while (true) {
    const TokenStream::Event next = *stream.next();
    if (!next.finished) {
      const std::string piece = reply.add(next.id);
      if (!piece.empty() && !send(event(text_chunk(endpoint, header, piece)))) return StreamEnd::ClientGone;
      if (reply.stop_found()) {
        stream.cancel();
        break;
      }
      continue;
    }
    // The status line went out with the first byte: an error can only be an event now,
    // which OpenAI's clients raise as an error.
    if (next.reason == FinishReason::Failed || (next.reason == FinishReason::ShutDown && reply.tokens() == 0)) {
      const ApiError error = next.reason == FinishReason::Failed ? failure(next) : shut_down();
      send(event(error_body(error)));
      return StreamEnd::Failed;
    }
    const std::string rest = reply.end();
    if (!rest.empty() && !send(event(text_chunk(endpoint, header, rest)))) return StreamEnd::ClientGone;
    finish_reason = openai_finish_reason(next.reason);
    break;
  }
  if (!send(event(finish_chunk(endpoint, header, finish_reason)))) return StreamEnd::ClientGone;
  if (request.include_usage &&
      !send(event(usage_chunk(endpoint, header, {stream.prompt_tokens(), reply.tokens()}))))
    return StreamEnd::ClientGone;
  if (!send(std::string(kStreamEnd))) return StreamEnd::ClientGone;
  sink.done();
  return StreamEnd::Complete;
}

}  // namespace tg::serve
