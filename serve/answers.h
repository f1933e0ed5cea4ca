// A completion's answer, from the engine's tokens to the client: the tokens
// decoded into text (whole UTF-8 characters only), cut at the request's stop
// texts, then sent as one JSON object or as server-sent events.
#pragma once
#include <memory>

#include "tinygpt/serve/engine.h"
#include "tinygpt/serve/openai_api.h"

namespace httplib {
class DataSink;
}

namespace tg::serve {

// Waits for the whole reply and returns the answer's JSON. Throws ApiError:
// 500 when the model failed, 503 when the server stopped before any token.
nlohmann::json whole_answer_of(const ApiRequest& request, TokenStream& stream, const tokenizer::TextTokenizer& tokenizer,
                               const AnswerHeader& header);

enum class StreamEnd {
  Complete,    // every chunk and "data: [DONE]" sent
  ClientGone,  // a write failed: the client went away, or took no data for the write timeout
  Failed,      // the model failed, or the server stopped before any token: an error event was the last
};

// Writes the reply to `sink` as it comes, chunk by chunk, then "data: [DONE]".
// A write that fails cancels the stream, so the engine drops the sequence.
StreamEnd stream_answer(const ApiRequest& request, TokenStream& stream, const tokenizer::TextTokenizer& tokenizer,
                   const AnswerHeader& header, httplib::DataSink& sink);

}  // namespace tg::serve
