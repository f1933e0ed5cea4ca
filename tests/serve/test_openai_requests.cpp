// parse_request: OpenAI's request bodies read into the engine's request, and
// every way a body can be wrong refused with the status and the field named.
// The model's side is the Llama fixture's tokenizer and chat template.
#include <doctest/doctest.h>

#include <string>

#include <nlohmann/json.hpp>

#include "tinygpt/serve/openai_api.h"

using namespace tg::serve;
using nlohmann::json;

namespace {

struct FixtureModel {
  tg::tokenizer::TextTokenizer tokenizer = tg::tokenizer::load_tokenizer_directory("tests/fixtures/hf_llama/llama");
  tg::ChatFormat format = tg::chat_format_for(tokenizer, {301});
  ServedModel model() const {
    ServedModel served;
    served.id = "llama";
    served.tokenizer = &tokenizer;
    served.chat_format = &format;
    served.text_stop_ids = {301};
    served.context = 128;
    served.max_tokens = 64;
    return served;
  }
};

const FixtureModel& fixture() {
  static const FixtureModel model;
  return model;
}

ApiRequest parse(Endpoint endpoint, const json& body) { return parse_request(endpoint, body.dump(), fixture().model()); }

// The ApiError a body gets, which must be one.
ApiError refusal(Endpoint endpoint, const std::string& body) {
  try {
    parse_request(endpoint, body, fixture().model());
  } catch (const ApiError& error) {
    return error;
  }
  FAIL("accepted: " << body);
  return ApiError(0, "");
}

ApiError refusal(const json& body) { return refusal(Endpoint::Completions, body.dump()); }

json completion(json fields) {
  json body = {{"prompt", "Hello"}};
  body.update(fields);
  return body;
}

}  // namespace

TEST_CASE("a completion's fields become the engine's request") {
  const ApiRequest request = parse(Endpoint::Completions, completion({{"model", "llama"}, {"max_tokens", 5},
                                                                       {"temperature", 0.5}, {"top_p", 0.9},
                                                                       {"seed", 7}, {"stop", "\n"}, {"stream", true},
                                                                       {"stream_options", {{"include_usage", true}}}}));
  CHECK(request.completion.prompt == fixture().tokenizer.encode("Hello", /*add_special_tokens=*/true));
  CHECK(request.completion.max_new_tokens == 5);
  CHECK(request.completion.sampling.temperature == 0.5);
  CHECK(request.completion.sampling.top_p == 0.9);
  CHECK_FALSE(request.completion.sampling.greedy);
  CHECK(request.completion.seed == 7);
  CHECK(request.completion.stop_ids == std::vector<int64_t>{301});
  CHECK(request.stop_texts == std::vector<std::string>{"\n"});
  CHECK(request.stream);
  CHECK(request.include_usage);
}

TEST_CASE("defaults: 16 tokens for a completion, the rest of the context for a chat; temperature 0 is greedy") {
  const ApiRequest text = parse(Endpoint::Completions, {{"prompt", "Hi"}});
  CHECK(text.completion.max_new_tokens == 16);
  CHECK_FALSE(text.stream);
  const ApiRequest chat =
      parse(Endpoint::ChatCompletions, {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"temperature", 0}});
  CHECK(chat.completion.max_new_tokens == 64);  // the server's cap, below the context's rest
  CHECK(chat.completion.sampling.greedy);
  CHECK(chat.completion.stop_ids == fixture().format.stop_ids);
}

TEST_CASE("a prompt of ids, and a list of one prompt") {
  CHECK(parse(Endpoint::Completions, {{"prompt", {5, 6, 7}}}).completion.prompt == std::vector<int64_t>{5, 6, 7});
  CHECK(parse(Endpoint::Completions, {{"prompt", {{5, 6}}}}).completion.prompt == std::vector<int64_t>{5, 6});
  CHECK(parse(Endpoint::Completions, {{"prompt", {"Hello"}}}).completion.prompt ==
        parse(Endpoint::Completions, {{"prompt", "Hello"}}).completion.prompt);
}

TEST_CASE("a chat is rendered with the model's template, the parts' texts joined") {
  const json messages = {{{"role", "developer"}, {"content", "Be terse."}},
                         {{"role", "user"}, {"content", {{{"type", "text"}, {"text", "Hi "}}, {{"type", "text"}, {"text", "there"}}}}}};
  const ApiRequest request = parse(Endpoint::ChatCompletions, {{"messages", messages}});
  nlohmann::ordered_json plain = nlohmann::ordered_json::array();
  plain.push_back({{"role", "system"}, {"content", "Be terse."}});
  plain.push_back({{"role", "user"}, {"content", "Hi there"}});
  CHECK(request.completion.prompt == tg::render_conversation(fixture().format, fixture().tokenizer, plain, "test").ids);
}

TEST_CASE("fields we do not know are ignored; defaults of what we cannot do are fine") {
  CHECK_NOTHROW(parse(Endpoint::Completions, completion({{"user", "me"}, {"frequency_penalty", 0}, {"n", 1},
                                                         {"logprobs", nullptr}, {"stop", nullptr},
                                                         {"presence_penalty", 0.0}, {"something_new", {1, 2}}})));
  CHECK_NOTHROW(parse(Endpoint::ChatCompletions, {{"messages", {{{"role", "user"}, {"content", "x"}}}},
                                                  {"logprobs", false}, {"tools", json::array()},
                                                  {"response_format", {{"type", "text"}}}}));
}

TEST_CASE("what tinygpt cannot honour is refused, naming the field") {
  for (const auto& [name, value] : std::vector<std::pair<std::string, json>>{{"n", 2},
                                                                            {"best_of", 3},
                                                                            {"frequency_penalty", 0.5},
                                                                            {"presence_penalty", -1},
                                                                            {"logprobs", 5},
                                                                            {"logprobs", true},
                                                                            {"top_logprobs", 2},
                                                                            {"logit_bias", {{"5", 10}}},
                                                                            {"echo", true},
                                                                            {"suffix", "end"},
                                                                            {"tools", {{{"type", "function"}}}},
                                                                            {"tool_choice", "required"},
                                                                            {"response_format", {{"type", "json_object"}}}}) {
    CAPTURE(name);
    const ApiError error = refusal(completion({{name, value}}));
    CHECK(error.status == 400);
    CHECK(error.param == name);
    CHECK(std::string(error.what()).find(name) != std::string::npos);
  }
}

TEST_CASE("wrong types and out-of-range values are refused with the field named") {
  for (const auto& [name, value] : std::vector<std::pair<std::string, json>>{
           {"max_tokens", -1},
           {"max_tokens", 0},
           {"max_tokens", 65},  // the server's cap is 64
           {"max_tokens", 1.5},
           {"max_tokens", "10"},
           {"max_tokens", json::parse("18446744073709551615")},
           {"max_completion_tokens", -5},
           {"temperature", -0.1},
           {"temperature", 2.5},
           {"temperature", "hot"},
           {"top_p", 0},
           {"top_p", 1.5},
           {"seed", 1.5},
           {"seed", json::parse("99999999999999999999")},
           {"stream", "yes"},
           {"stream_options", 1},
           {"stream_options", {{"include_usage", "yes"}}},
           {"stop", 5},
           {"stop", {"a", "b", "c", "d", "e"}},
           {"stop", {"a", 1}},
           {"stop", ""},
           {"model", 5},
           {"prompt", ""},
           {"prompt", 5},
           {"prompt", json::array()},
           {"prompt", {"a", "b"}},
           {"prompt", {-1}},
           {"prompt", {320}},  // the vocabulary has 320 ids
           {"prompt", {1.5}},
       }) {
    CAPTURE(name);
    CAPTURE(value.dump());
    const ApiError error = refusal(completion({{name, value}}));
    CHECK(error.status == 400);
    CHECK(error.param.rfind(name, 0) == 0);  // the field, or the field inside it at fault
  }
  CHECK(refusal(completion({{"stream_options", {{"include_usage", 1}}}})).param == "stream_options.include_usage");
  CHECK(refusal(Endpoint::Completions, "{}").param == "prompt");
  CHECK(refusal(Endpoint::Completions, R"({"prompt": "a", "max_tokens": 1e400})").status == 400);
}

TEST_CASE("a chat's messages are checked one by one") {
  for (const auto& [param, messages] : std::vector<std::pair<std::string, json>>{
           {"messages", json::array()},
           {"messages", "hello"},
           {"messages[0]", {"hello"}},
           {"messages[0].role", {{{"role", "tool"}, {"content", "x"}}}},
           {"messages[0].role", {{{"content", "x"}}}},
           {"messages[1].content", {{{"role", "user"}, {"content", "x"}}, {{"role", "assistant"}}}},
           {"messages[0].content", {{{"role", "user"}, {"content", 5}}}},
           {"messages[0].content", {{{"role", "user"}, {"content", {{{"type", "image_url"}, {"image_url", "x"}}}}}}},
       }) {
    CAPTURE(messages.dump());
    const ApiError error = refusal(Endpoint::ChatCompletions, json{{"messages", messages}}.dump());
    CHECK(error.status == 400);
    CHECK(error.param == param);
  }
}

TEST_CASE("a body that is no JSON object, or holds invalid UTF-8, is a 400") {
  for (const std::string body : {"", "{", "not json", "[1, 2]", "\"text\"", "{\"prompt\": \"a\",}",
                                 "{\"prompt\": \"\xff\xfe\"}", "{\"prompt\": \"\\ud800\"}",
                                 "{\"prompt\": \"a\xc3\"}"}) {
    CAPTURE(body);
    const ApiError error = refusal(Endpoint::Completions, body);
    CHECK(error.status == 400);
  }
}

TEST_CASE("another model's name is a 404; none at all is fine") {
  const ApiError error = refusal(completion({{"model", "gpt-4"}}));
  CHECK(error.status == 404);
  CHECK(error.code == "model_not_found");
  CHECK(error.param == "model");
  CHECK_NOTHROW(parse(Endpoint::Completions, completion({{"model", nullptr}})));
}

TEST_CASE("a prompt that fills the context is refused as context_length_exceeded") {
  std::vector<int64_t> ids(128, 5);
  const ApiError error = refusal(json{{"prompt", ids}});
  CHECK(error.status == 400);
  CHECK(error.code == "context_length_exceeded");
  CHECK(error.param == "prompt");
  ids.pop_back();
  CHECK(parse(Endpoint::Completions, {{"prompt", ids}}).completion.prompt.size() == 127);
  const ApiError chat = refusal(Endpoint::ChatCompletions,
                                json{{"messages", {{{"role", "user"}, {"content", std::string(600, 'a')}}}}}.dump());
  CHECK(chat.code == "context_length_exceeded");
  CHECK(chat.param == "messages");
}
