// OpenAI's API, the parts tinygpt serve speaks: request bodies of /v1/completions
// and /v1/chat/completions read and checked into an engine request, and the
// answers built in OpenAI's shapes (whole, or as server-sent events' chunks).
//
// A request is refused (ApiError: 400 naming the field) when a value is of the
// wrong type or out of range, or asks for what tinygpt cannot do (n > 1,
// logprobs, tools, penalties, ...): a client is told, not silently given less.
// Fields we do not know are ignored, as OpenAI's own server does with `user`.
//
// Requests are read in openai_requests.cpp, answers written in openai_answers.cpp.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/datasets/chat_format.h"
#include "tinygpt/serve/engine.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::serve {

// A request the server answers with an error: an HTTP status and OpenAI's error object.
struct ApiError : Error {
  ApiError(int status, const std::string& message, std::string param = "", std::string code = "",
           std::string type = "invalid_request_error");
  int status;
  std::string param;  // the request's field at fault, "" for none
  std::string code;   // e.g. "context_length_exceeded", "" for none
  std::string type;   // "invalid_request_error", "authentication_error", "server_error", ...
};

// {"error": {"message", "type", "param", "code"}}, param and code null when empty.
nlohmann::json error_body(const ApiError& error);

// Dumps a response body: text a model made may hold invalid UTF-8 (a token can end
// inside a character), replaced by U+FFFD rather than thrown on.
std::string dump_json(const nlohmann::json& body);

// What requests are checked against: the one model this server holds.
struct ServedModel {
  std::string id;  // the name clients give as "model"
  const tokenizer::TextTokenizer* tokenizer = nullptr;
  const ChatFormat* chat_format = nullptr;
  std::vector<int64_t> text_stop_ids;  // /v1/completions: the model's end of text
  int64_t context = 0;                 // the model's block size, in tokens
  int64_t max_tokens = 0;              // the most a request may ask for (serve --max-tokens)
};

enum class Endpoint { Completions, ChatCompletions };

struct ApiRequest {
  Endpoint endpoint = Endpoint::Completions;
  CompletionRequest completion;  // the engine's request, but its deadline
  std::vector<std::string> stop_texts;  // "stop": up to 4 texts that end the reply (not included in it)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage: a last chunk with the token counts
};

// Reads and checks a request body for `endpoint`. Throws ApiError (400, or 404
// for another model's name) naming the field and what is wrong with it.
ApiRequest parse_request(Endpoint endpoint, std::string_view body, const ServedModel& model);

// ---- answers ----

// "stop" or "length": OpenAI has no other reason for a reply that ended well; a
// reply cut by the server's time limit is "length" (the limit was reached), as is one cut by shutdown.
const char* openai_finish_reason(FinishReason reason);

struct Usage {
  int64_t prompt_tokens = 0, completion_tokens = 0;
};

// Identity of one answer, the same in each of its chunks.
struct AnswerHeader {
  std::string id;  // "cmpl-..." or "chatcmpl-..."
  int64_t created = 0;  // Unix seconds
  std::string model;
};
AnswerHeader new_answer_header(Endpoint endpoint, const std::string& model);

nlohmann::json whole_answer(Endpoint endpoint, const AnswerHeader& header, const std::string& text,
                            const char* finish_reason, Usage usage);

// One server-sent event of a stream: "data: {...}\n\n".
std::string event(const nlohmann::json& chunk);
inline constexpr std::string_view kStreamEnd = "data: [DONE]\n\n";

// A chunk with a piece of text (and no finish reason). For chat, the first
// chunk of a stream also says the role.
nlohmann::json text_chunk(Endpoint endpoint, const AnswerHeader& header, const std::string& text,
                          bool first = false);
// The last chunk with a choice: no text, the finish reason.
nlohmann::json finish_chunk(Endpoint endpoint, const AnswerHeader& header, const char* finish_reason);
// stream_options.include_usage: after the finish, a chunk with no choices and the counts.
nlohmann::json usage_chunk(Endpoint endpoint, const AnswerHeader& header, Usage usage);

nlohmann::json models_list(const std::string& model_id, int64_t created);

}  // namespace tg::serve
