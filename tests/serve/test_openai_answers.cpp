// The answers' shapes: OpenAI's whole answers, stream chunks and errors, as its clients read them.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tinygpt/serve/openai_api.h"

using namespace tg::serve;
using nlohmann::json;

TEST_CASE("a whole completion and a whole chat answer") {
  const AnswerHeader header = new_answer_header(Endpoint::Completions, "tiny");
  CHECK(header.id.rfind("cmpl-", 0) == 0);
  CHECK(header.created > 1'600'000'000);
  const json text = whole_answer(Endpoint::Completions, header, "Hello", "length", {3, 5});
  CHECK(text["object"] == "text_completion");
  CHECK(text["id"] == header.id);
  CHECK(text["model"] == "tiny");
  CHECK(text["choices"][0]["text"] == "Hello");
  CHECK(text["choices"][0]["index"] == 0);
  CHECK(text["choices"][0]["finish_reason"] == "length");
  CHECK(text["usage"] == json{{"prompt_tokens", 3}, {"completion_tokens", 5}, {"total_tokens", 8}});

  const AnswerHeader chat_header = new_answer_header(Endpoint::ChatCompletions, "tiny");
  CHECK(chat_header.id.rfind("chatcmpl-", 0) == 0);
  CHECK(chat_header.id != new_answer_header(Endpoint::ChatCompletions, "tiny").id);
  const json chat = whole_answer(Endpoint::ChatCompletions, chat_header, "Hi", "stop", {1, 1});
  CHECK(chat["object"] == "chat.completion");
  CHECK(chat["choices"][0]["message"] == json{{"role", "assistant"}, {"content", "Hi"}});
  CHECK(chat["choices"][0]["finish_reason"] == "stop");
}

TEST_CASE("a chat stream: the role first, then text, then the finish, the usage and [DONE]") {
  const AnswerHeader header = new_answer_header(Endpoint::ChatCompletions, "tiny");
  const json first = text_chunk(Endpoint::ChatCompletions, header, "", /*first=*/true);
  CHECK(first["object"] == "chat.completion.chunk");
  CHECK(first["choices"][0]["delta"] == json{{"role", "assistant"}, {"content", ""}});
  CHECK(first["choices"][0]["finish_reason"].is_null());
  CHECK(text_chunk(Endpoint::ChatCompletions, header, "ab")["choices"][0]["delta"] == json{{"content", "ab"}});
  const json last = finish_chunk(Endpoint::ChatCompletions, header, "length");
  CHECK(last["choices"][0]["delta"] == json::object());
  CHECK(last["choices"][0]["finish_reason"] == "length");
  const json usage = usage_chunk(Endpoint::ChatCompletions, header, {2, 4});
  CHECK(usage["choices"] == json::array());
  CHECK(usage["usage"]["total_tokens"] == 6);
  CHECK(event(json{{"a", 1}}) == "data: {\"a\":1}\n\n");
  CHECK(kStreamEnd == "data: [DONE]\n\n");
}

TEST_CASE("a completion stream's chunks carry text") {
  const AnswerHeader header = new_answer_header(Endpoint::Completions, "tiny");
  const json chunk = text_chunk(Endpoint::Completions, header, "xy");
  CHECK(chunk["object"] == "text_completion");
  CHECK(chunk["choices"][0]["text"] == "xy");
  CHECK(finish_chunk(Endpoint::Completions, header, "stop")["choices"][0]["text"] == "");
}

TEST_CASE("errors in OpenAI's shape, null where there is no param or code") {
  const json named = error_body(ApiError(400, "max_tokens is bad", "max_tokens", "", "invalid_request_error"));
  CHECK(named == json{{"error", {{"message", "max_tokens is bad"}, {"type", "invalid_request_error"},
                                 {"param", "max_tokens"}, {"code", nullptr}}}});
  const json plain = error_body(ApiError(503, "busy", "", "", "server_error"));
  CHECK(plain["error"]["param"].is_null());
  CHECK(plain["error"]["type"] == "server_error");
}

TEST_CASE("a model's invalid UTF-8 is replaced, not thrown on, when dumped") {
  const AnswerHeader header = new_answer_header(Endpoint::Completions, "tiny");
  const std::string dumped = dump_json(whole_answer(Endpoint::Completions, header, "a\xff" "b", "stop", {1, 2}));
  CHECK(dumped.find("a\xef\xbf\xbd" "b") != std::string::npos);  // U+FFFD
}

TEST_CASE("finish reasons in OpenAI's words") {
  CHECK(std::string(openai_finish_reason(FinishReason::Stop)) == "stop");
  CHECK(std::string(openai_finish_reason(FinishReason::Length)) == "length");
  CHECK(std::string(openai_finish_reason(FinishReason::TimedOut)) == "length");
  const json models = models_list("tiny", 5);
  CHECK(models["object"] == "list");
  CHECK(models["data"][0]["id"] == "tiny");
  CHECK(models["data"][0]["object"] == "model");
}
