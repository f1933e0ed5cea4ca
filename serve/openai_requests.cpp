// OpenAI's request bodies read and checked (serve/openai_api.h).
#include "tinygpt/serve/openai_api.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <sstream>

#include "tinygpt/serve/request_fields.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg::serve {

using nlohmann::json;

ApiError::ApiError(int status, const std::string& message, std::string param, std::string code, std::string type)
    : Error(message), status(status), param(std::move(param)), code(std::move(code)), type(std::move(type)) {}

namespace {

// What OpenAI offers and tinygpt does not: asked for with a value that changes
// the answer, it is refused; sent with its default (clients send
// "frequency_penalty": 0, "n": 1, "logprobs": false), it is fine.
void refuse_what_we_cannot_honour(const json& body) {
  if (const auto n = integer_field(body, "n", 1, 128); n && *n != 1)
    refuse("n", "must be 1: tinygpt serve gives one choice per request");
  if (const auto best_of = integer_field(body, "best_of", 1, 128); best_of && *best_of != 1)
    refuse("best_of", "must be 1: tinygpt serve gives one choice per request");
  for (const char* penalty : {"frequency_penalty", "presence_penalty"})
    if (const auto value = number_field(body, penalty, -2, 2); value && *value != 0)
      refuse(penalty, "is not supported by tinygpt serve; give 0 or leave it out");
  if (const json* logprobs = field(body, "logprobs"); logprobs && *logprobs != json(false) && *logprobs != json(0))
    refuse("logprobs", "are not supported by tinygpt serve; leave it out");
  if (const json* top_logprobs = field(body, "top_logprobs"); top_logprobs && *top_logprobs != json(0))
    refuse("top_logprobs", "are not supported by tinygpt serve; leave it out");
  if (const json* bias = field(body, "logit_bias"); bias && !(bias->is_object() && bias->empty()))
    refuse("logit_bias", "is not supported by tinygpt serve; leave it out");
  if (bool_field(body, "echo").value_or(false)) refuse("echo", "is not supported by tinygpt serve; leave it out");
  if (const json* suffix = field(body, "suffix"); suffix && *suffix != json(""))
    refuse("suffix", "is not supported by tinygpt serve; leave it out");
  for (const char* name : {"tools", "functions"})
    if (const json* tools = field(body, name); tools && !(tools->is_array() && tools->empty()))
      refuse(name, "are not supported by tinygpt serve: the model cannot call tools");
  for (const char* name : {"tool_choice", "function_call"})
    if (const json* choice = field(body, name); choice && *choice != json("none") && *choice != json("auto"))
      refuse(name, "is not supported by tinygpt serve: the model cannot call tools");
  if (const json* format = field(body, "response_format");
      format && !(format->is_object() && format->value("type", json()) == json("text")))
    refuse("response_format", "other than {\"type\": \"text\"} is not supported by tinygpt serve");
}

std::vector<std::string> stop_texts(const json& body) {
  const json* stop = field(body, "stop");
  if (!stop) return {};
  const std::string expected = "must be a string or an array of up to 4 non-empty strings, got ";
  std::vector<std::string> texts;
  if (stop->is_string()) {
    texts.push_back(stop->get<std::string>());
  } else if (stop->is_array() && stop->size() <= 4) {
    for (const json& text : *stop) {
      if (!text.is_string()) refuse("stop", expected + stop->dump());
      texts.push_back(text.get<std::string>());
    }
  } else {
    refuse("stop", expected + stop->dump());
  }
  for (const std::string& text : texts)
    if (text.empty()) refuse("stop", "holds an empty string, which would match everywhere");
  return texts;
}

// /v1/completions' prompt: a text, or the ids of one (an array of integers); a
// list of one of either is the same. More than one prompt would be more than one choice.
std::vector<int64_t> completion_prompt(const json& body, const ServedModel& model) {
  const json* prompt = field(body, "prompt");
  if (!prompt) refuse("prompt", "is required");
  const json* single = prompt;
  if (prompt->is_array() && prompt->size() == 1 && ((*prompt)[0].is_string() || (*prompt)[0].is_array()))
    single = &(*prompt)[0];
  if (single->is_string()) {
    const std::string text = single->get<std::string>();
    if (text.empty()) refuse("prompt", "is empty; give at least one character");
    try {
      return model.tokenizer->encode(text, /*add_special_tokens=*/true);  // as tinygpt sample: Llama's BOS first
    } catch (const tokenizer::TokenizerError& error) {
      refuse("prompt", std::string("cannot be encoded: ") + error.what());
    }
  }
  if (!single->is_array() || single->empty())
    refuse("prompt", "must be a non-empty string or array of token ids (one prompt per request)");
  std::vector<int64_t> ids;
  const int64_t vocab_size = model.tokenizer->vocab_size();
  for (const json& id : *single) {
    if (!id.is_number_integer() || (id.is_number_unsigned() && id.get<uint64_t>() >= static_cast<uint64_t>(vocab_size)) ||
        id.get<int64_t>() < 0 || id.get<int64_t>() >= vocab_size)
      refuse("prompt", "token ids must be integers from 0 to " + std::to_string(vocab_size - 1) + ", got " + id.dump());
    ids.push_back(id.get<int64_t>());
  }
  return ids;
}

// A message's content: a text, or OpenAI's list of parts of which tinygpt reads the text ones.
std::string message_content(const json& content, size_t index) {
  const std::string name = "messages[" + std::to_string(index) + "].content";
  if (content.is_string()) return content.get<std::string>();
  if (!content.is_array()) refuse(name, "must be a string or an array of text parts, got " + content.dump());
  std::string text;
  for (const json& part : content) {
    if (!part.is_object() || part.value("type", json()) != json("text") || !part.contains("text") ||
        !part["text"].is_string())
      refuse(name, "parts must be {\"type\": \"text\", \"text\": \"...\"}: tinygpt serve reads text only");
    text += part["text"].get<std::string>();
  }
  return text;
}

std::vector<int64_t> chat_prompt(const json& body, const ServedModel& model) {
  const json* messages = field(body, "messages");
  if (!messages) refuse("messages", "is required");
  if (!messages->is_array() || messages->empty()) refuse("messages", "must be a non-empty array of messages");
  nlohmann::ordered_json conversation = nlohmann::ordered_json::array();
  for (size_t index = 0; index < messages->size(); ++index) {
    const json& message = (*messages)[index];
    const std::string name = "messages[" + std::to_string(index) + "]";
    if (!message.is_object()) refuse(name, "must be an object with a role and a content");
    const json role = message.value("role", json());
    // OpenAI's newer name for the system's role.
    const std::string role_name = role == json("developer") ? "system" : role.is_string() ? role.get<std::string>() : "";
    if (role_name != "system" && role_name != "user" && role_name != "assistant")
      refuse(name + ".role", "must be \"system\", \"developer\", \"user\" or \"assistant\", got " + role.dump());
    const json* content = field(message, "content");
    if (!content) refuse(name + ".content", "is required");
    conversation.push_back({{"role", role_name}, {"content", message_content(*content, index)}});
  }
  try {
    return render_conversation(*model.chat_format, *model.tokenizer, conversation, "serve").ids;
  } catch (const Error& error) {
    refuse("messages", std::string("cannot be rendered with the model's chat template: ") + error.what());
  }
}

}  // namespace

ApiRequest parse_request(Endpoint endpoint, std::string_view body_text, const ServedModel& model) {
  const json body = parse_body(body_text);

  if (const json* name = field(body, "model")) {
    if (!name->is_string()) refuse("model", "must be a string, got " + name->dump());
    if (name->get<std::string>() != model.id)
      throw ApiError(404, "the model '" + name->get<std::string>() + "' does not exist; this server has '" + model.id +
                              "' (GET /v1/models)",
                     "model", "model_not_found");
  }
  refuse_what_we_cannot_honour(body);

  ApiRequest request;
  request.endpoint = endpoint;
  request.stream = bool_field(body, "stream").value_or(false);
  if (const json* options = field(body, "stream_options")) {
    if (!options->is_object()) refuse("stream_options", "must be an object, got " + options->dump());
    const json* include_usage = field(*options, "include_usage");
    if (include_usage && !include_usage->is_boolean())
      refuse("stream_options.include_usage", "must be true or false, got " + include_usage->dump());
    request.include_usage = include_usage && include_usage->get<bool>();
  }
  request.stop_texts = stop_texts(body);

  CompletionRequest& completion = request.completion;
  SamplingOptions& sampling = completion.sampling;
  if (const auto temperature = number_field(body, "temperature", 0, 2)) {
    if (*temperature == 0)
      sampling.greedy = true;  // as in OpenAI's API and tinygpt sample --temperature 0
    else
      sampling.temperature = *temperature;
  }
  if (const json* top_p = field(body, "top_p"); top_p && *top_p == json(0)) refuse("top_p", "must be above 0, got 0");
  sampling.top_p = number_field(body, "top_p", 0, 1).value_or(1.0);
  sampling.vocabulary_size = model.tokenizer->vocab_size();
  const auto seed = integer_field(body, "seed", std::numeric_limits<int64_t>::min(), std::numeric_limits<int64_t>::max());
  completion.seed = seed ? static_cast<uint64_t>(*seed) : std::random_device{}();

  const char* prompt_field = endpoint == Endpoint::Completions ? "prompt" : "messages";
  if (endpoint == Endpoint::Completions) {
    completion.prompt = completion_prompt(body, model);
    completion.stop_ids = model.text_stop_ids;
  } else {
    completion.prompt = chat_prompt(body, model);
    completion.stop_ids = model.chat_format->stop_ids;
  }
  const int64_t prompt_tokens = static_cast<int64_t>(completion.prompt.size());
  if (prompt_tokens >= model.context)
    throw ApiError(400, "the prompt has " + std::to_string(prompt_tokens) + " tokens; the model's context is " +
                            std::to_string(model.context) + " tokens and must leave room for at least one more",
                   prompt_field, "context_length_exceeded");

  // max_completion_tokens is the newer name. Without either, the reply may fill the
  // context (chat) or takes OpenAI's 16 tokens (completions); both within the
  // server's cap, which a request may not pass (said in the range of the refusal).
  const char* max_field = field(body, "max_completion_tokens") ? "max_completion_tokens" : "max_tokens";
  const int64_t default_tokens = endpoint == Endpoint::Completions ? 16 : model.context - prompt_tokens;
  completion.max_new_tokens =
      integer_field(body, max_field, 1, model.max_tokens).value_or(std::min(default_tokens, model.max_tokens));
  return request;
}

}  // namespace tg::serve
