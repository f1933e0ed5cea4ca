// OpenAI's answers, stream chunks and errors (serve/openai_api.h).
#include "tinygpt/serve/openai_api.h"

#include <chrono>
#include <random>

namespace tg::serve {

using nlohmann::json;

json error_body(const ApiError& error) {
  const auto or_null = [](const std::string& text) { return text.empty() ? json(nullptr) : json(text); };
  return {{"error",
           {{"message", error.what()}, {"type", error.type}, {"param", or_null(error.param)},
            {"code", or_null(error.code)}}}};
}

std::string dump_json(const json& body) { return body.dump(-1, ' ', false, json::error_handler_t::replace); }

const char* openai_finish_reason(FinishReason reason) { return reason == FinishReason::Stop ? "stop" : "length"; }

AnswerHeader new_answer_header(Endpoint endpoint, const std::string& model) {
  static thread_local std::mt19937_64 generator{std::random_device{}()};
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string id = endpoint == Endpoint::Completions ? "cmpl-" : "chatcmpl-";
  for (int digit = 0; digit < 24; ++digit) id += kDigits[generator() % 16];
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  return {id, std::chrono::duration_cast<std::chrono::seconds>(now).count(), model};
}

namespace {

json usage_json(Usage usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens}};
}

json answer_frame(const AnswerHeader& header, const char* object) {
  return {{"id", header.id}, {"object", object}, {"created", header.created}, {"model", header.model}};
}

json finish_reason_json(const char* finish_reason) { return finish_reason ? json(finish_reason) : json(nullptr); }

}  // namespace

json whole_answer(Endpoint endpoint, const AnswerHeader& header, const std::string& text, const char* finish_reason,
                  Usage usage) {
  json choice = {{"index", 0}};
  if (endpoint == Endpoint::Completions) {
    choice["text"] = text;
    choice["logprobs"] = nullptr;
  } else {
    choice["message"] = {{"role", "assistant"}, {"content", text}};
    choice["logprobs"] = nullptr;
  }
  choice["finish_reason"] = finish_reason;
  json answer = answer_frame(header, endpoint == Endpoint::Completions ? "text_completion" : "chat.completion");
  answer["choices"] = json::array({choice});
  answer["usage"] = usage_json(usage);
  return answer;
}

std::string event(const json& chunk) { return "data: " + dump_json(chunk) + "\n\n"; }

namespace {

json chunk_with_choice(Endpoint endpoint, const AnswerHeader& header, const std::string& text, bool first,
                       const char* finish_reason) {
  json choice = {{"index", 0}};
  if (endpoint == Endpoint::Completions) {
    choice["text"] = text;
  } else {
    json delta = json::object();
    if (first) delta["role"] = "assistant";
    if (!text.empty() || first) delta["content"] = text;
    choice["delta"] = delta;
  }
  choice["logprobs"] = nullptr;
  choice["finish_reason"] = finish_reason_json(finish_reason);
  json chunk = answer_frame(header, endpoint == Endpoint::Completions ? "text_completion" : "chat.completion.chunk");
  chunk["choices"] = json::array({choice});
  return chunk;
}

}  // namespace

json text_chunk(Endpoint endpoint, const AnswerHeader& header, const std::string& text, bool first) {
  return chunk_with_choice(endpoint, header, text, first, nullptr);
}

json finish_chunk(Endpoint endpoint, const AnswerHeader& header, const char* finish_reason) {
  return chunk_with_choice(endpoint, header, "", false, finish_reason);
}

json usage_chunk(Endpoint endpoint, const AnswerHeader& header, Usage usage) {
  json chunk = answer_frame(header, endpoint == Endpoint::Completions ? "text_completion" : "chat.completion.chunk");
  chunk["choices"] = json::array();
  chunk["usage"] = usage_json(usage);
  return chunk;
}

json models_list(const std::string& model_id, int64_t created) {
  return {{"object", "list"},
          {"data", json::array({{{"id", model_id}, {"object", "model"}, {"created", created}, {"owned_by", "tinygpt"}}})}};
}

}  // namespace tg::serve
