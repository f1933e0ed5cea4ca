// POST /v1/explain's side of the server (serve/explain_api.h): the request read
// and checked against the model, every mistake a 400 naming the field; the answer
// the walk-through's JSON, refused when it would hold too many numbers.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/inspect/walkthrough_fixture.h"
#include "tinygpt/inspect/walkthrough_json.h"
#include "tinygpt/serve/explain_api.h"

using namespace tg;
using namespace tg::serve;
using nlohmann::json;

namespace {

struct Fixture {
  tokenizer::TextTokenizer tokenizer = testing::tiny_tokenizer();
  GPT model{testing::tiny_walkthrough_config(), 5};  // 2 blocks, 2 heads, context 8
  ServedModel served() const {
    ServedModel served;
    served.id = "tiny";
    served.tokenizer = &tokenizer;
    served.context = 8;
    served.max_tokens = 8;
    return served;
  }
  ExplainRequest parse(const std::string& body) const { return parse_explain_request(body, served(), model.config()); }
  ApiError refusal(const std::string& body) const {
    try {
      parse(body);
    } catch (const ApiError& error) {
      return error;
    }
    FAIL("the body was accepted: " << body);
    return ApiError(0, "");
  }
};

}  // namespace

TEST_CASE("parse_explain_request: the fields, their defaults") {
  const Fixture fixture;
  const ExplainRequest plain = fixture.parse(R"({"prompt": "abc"})");
  CHECK(plain.prompt == "abc");
  CHECK(plain.options.target.empty());
  CHECK(plain.options.layer == 0);  // one block's stages unless asked: the answer stays small
  CHECK(!plain.options.head.has_value());
  CHECK(plain.options.top_k == 5);
  CHECK(!plain.options.attribute_position.has_value());  // the prompt's last position
  const ExplainRequest full =
      fixture.parse(R"({"prompt": "ab", "target": "cd", "layer": 1, "head": 1, "top_k": 3, "attribute_position": 3,
                        "model": "tiny"})");
  CHECK(full.options.attribute_position == 3);
  CHECK(full.options.target == "cd");
  CHECK(full.options.layer == 1);
  CHECK(full.options.head == 1);
  CHECK(full.options.top_k == 3);
  CHECK(fixture.parse(R"({"prompt": "ab", "head": null, "unknown": 1})").options.head == std::nullopt);
}

TEST_CASE("parse_explain_request: each mistake a 400 naming the field") {
  const Fixture fixture;
  const auto check_refused = [&](const std::string& body, int status, const std::string& param, const std::string& words) {
    CAPTURE(body);
    const ApiError error = fixture.refusal(body);
    CHECK(error.status == status);
    CHECK(error.param == param);
    CHECK(std::string(error.what()).find(words) != std::string::npos);
  };
  check_refused("{", 400, "", "not valid JSON");
  check_refused("[1]", 400, "", "must be a JSON object");
  check_refused("{}", 400, "prompt", "prompt is required");
  check_refused(R"({"prompt": ""})", 400, "prompt", "prompt is empty");
  check_refused(R"({"prompt": 5})", 400, "prompt", "must be a string");
  check_refused(R"({"prompt": "a", "target": ["b"]})", 400, "target", "must be a string");
  check_refused(R"({"prompt": "a", "layer": 2})", 400, "layer", "from 0 to 1, got 2");
  check_refused(R"({"prompt": "a", "layer": 1.0})", 400, "layer", "must be an integer");
  check_refused(R"({"prompt": "a", "head": -1})", 400, "head", "from 0 to 1, got -1");
  check_refused(R"({"prompt": "a", "top_k": 0})", 400, "top_k", "from 1 to 20");
  check_refused(R"({"prompt": "a", "top_k": 1e30})", 400, "top_k", "must be an integer");
  check_refused(R"({"prompt": "abcdefgh a"})", 400, "prompt", "the prompt makes 10 tokens; the model's context is 8");
  check_refused(R"({"prompt": "abcdef", "target": "abc"})", 400, "prompt", "the prompt and target make 9 tokens");
  check_refused(R"({"prompt": "xyz"})", 400, "prompt", "prompt cannot be tokenised");
  check_refused(R"({"prompt": "a", "target": "Z"})", 400, "target", "target cannot be tokenised");
  check_refused(R"({"prompt": "a", "model": "other"})", 404, "model", "does not exist");
  check_refused(R"({"prompt": "ab", "attribute_position": 2})", 400, "attribute_position",
                "is 2, but the text has 2 tokens (positions 0 to 1)");
  check_refused(R"({"prompt": "ab", "attribute_position": 8})", 400, "attribute_position", "from 0 to 7");
}

TEST_CASE("parse_explain_request: a model of 0 layers (the course's bigram) has no block to choose") {
  Fixture fixture;
  GPTConfig config = testing::tiny_walkthrough_config();
  config.n_layer = 0;
  config.positional = PositionalEncoding::Rope;
  const ExplainRequest request = parse_explain_request(R"({"prompt": "ab"})", fixture.served(), config);
  CHECK(!request.options.layer.has_value());
  try {
    parse_explain_request(R"({"prompt": "ab", "layer": 0})", fixture.served(), config);
    FAIL("a layer of a model without blocks was accepted");
  } catch (const ApiError& error) {
    CHECK(error.param == "layer");
    CHECK(std::string(error.what()).find("has none (0 layers)") != std::string::npos);
  }
}

TEST_CASE("explain_answer: the walk-through's JSON, or a 400 when it would hold too many numbers") {
  Fixture fixture;
  const ExplainRequest request = fixture.parse(R"({"prompt": "abc a", "target": "b", "layer": 1})");
  json answer = json::parse(explain_answer(fixture.model, fixture.served(), request, 1 << 20));
  CHECK(answer["milliseconds"].get<double>() > 0);
  CHECK(answer["model"] == "tiny");
  const inspect::Walkthrough expected = inspect::walk_through(fixture.model, fixture.tokenizer, "abc a", request.options);
  json expected_answer = json::parse(inspect::walkthrough_json(expected, request.options));
  answer.erase("milliseconds");
  expected_answer.erase("milliseconds");
  CHECK(answer == expected_answer);
  CHECK(answer["layer"] == 1);
  CHECK(answer["stages"][4]["id"] == "block1.ln_1");

  int64_t values = 0;
  for (const inspect::Stage& stage : expected.stages)
    for (const inspect::ShownTensor& shown : stage.tensors) values += shown.value.numel();
  CHECK_NOTHROW(explain_answer(fixture.model, fixture.served(), request, values));
  try {
    explain_answer(fixture.model, fixture.served(), request, values - 1);
    FAIL("an answer over the bound was given");
  } catch (const ApiError& error) {
    CHECK(error.status == 400);
    CHECK(std::string(error.what()).find("ask for one head") != std::string::npos);
  }
}
