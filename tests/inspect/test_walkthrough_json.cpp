// The walk-through as JSON (inspect/walkthrough_json.h): every stage with its
// words and shapes, each tensor's float32 bits exactly, the large ones left out
// and said so, the loss only with a target.
#include <doctest/doctest.h>

#include <cstring>
#include <nlohmann/json.hpp>

#include "tests/inspect/walkthrough_fixture.h"
#include "tinygpt/inspect/walkthrough_json.h"

using namespace tg;
using namespace tg::inspect;
using nlohmann::json;

namespace {

std::vector<float> floats_of(const std::string& base64) {
  auto value = [](char c) -> uint32_t {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    return c == '+' ? 62 : 63;
  };
  std::string bytes;
  for (size_t at = 0; at + 3 < base64.size(); at += 4) {
    const uint32_t group = value(base64[at]) << 18 | value(base64[at + 1]) << 12 |
                           (base64[at + 2] == '=' ? 0 : value(base64[at + 2]) << 6) |
                           (base64[at + 3] == '=' ? 0 : value(base64[at + 3]));
    bytes += static_cast<char>(group >> 16);
    if (base64[at + 2] != '=') bytes += static_cast<char>(group >> 8 & 255);
    if (base64[at + 3] != '=') bytes += static_cast<char>(group & 255);
  }
  REQUIRE(bytes.size() % sizeof(float) == 0);
  std::vector<float> floats(bytes.size() / sizeof(float));
  std::memcpy(floats.data(), bytes.data(), bytes.size());
  return floats;
}

}  // namespace

TEST_CASE("base64_of: RFC 4648's test vectors") {
  for (const auto& [plain, encoded] : std::vector<std::pair<std::string, std::string>>{
           {"", ""}, {"f", "Zg=="}, {"fo", "Zm8="}, {"foo", "Zm9v"}, {"foob", "Zm9vYg=="},
           {"fooba", "Zm9vYmE="}, {"foobar", "Zm9vYmFy"}, {std::string("\xff\xfe\x00", 3), "//4A"}})
    CHECK(base64_of(plain.data(), plain.size()) == encoded);
}

TEST_CASE("walkthrough_json: every stage, its words and its tensors' bits") {
  GPT model(testing::tiny_walkthrough_config(), 3);
  const tokenizer::TextTokenizer tokenizer = testing::tiny_tokenizer();
  WalkthroughOptions options;
  options.layer = 1;
  options.target = "de";
  const Walkthrough walkthrough = walk_through(model, tokenizer, "abc a", options);
  const json body = json::parse(walkthrough_json(walkthrough, options, {.milliseconds = 12.5}));

  CHECK(body["object"] == "explain");
  CHECK(body["milliseconds"] == 12.5);
  CHECK(body["model"] == walkthrough.model_description);
  CHECK(body["layer"] == 1);
  CHECK(body["head"].is_null());
  CHECK(body["config"]["n_layer"] == 2);
  CHECK(body["config"]["n_kv_head"] == 2);
  CHECK(body["prompt_tokens"] == 5);
  REQUIRE(body["tokens"].size() == 7);
  CHECK(body["tokens"][3]["text"] == walkthrough.tokens[3].text);
  REQUIRE(body["stages"].size() == walkthrough.stages.size());
  bool saw_attention = false;
  for (size_t s = 0; s < walkthrough.stages.size(); ++s) {
    const Stage& stage = walkthrough.stages[s];
    const json& written = body["stages"][s];
    CAPTURE(stage.id);
    CHECK(written["id"] == stage.id);
    CHECK(written["title"] == stage.title);
    CHECK(written["formula"] == stage.formula);
    CHECK(written["output_shape"] == json(stage.output_shape));
    CHECK(written["view"] == (stage.view == StageView::Attention ? "attention" : "values"));
    CHECK(written["omitted"] == false);
    REQUIRE(written["tensors"].size() == stage.tensors.size());
    for (size_t t = 0; t < stage.tensors.size(); ++t) {
      CHECK(written["tensors"][t]["label"] == stage.tensors[t].label);
      CHECK(written["tensors"][t]["shape"] == json(stage.tensors[t].value.shape()));
      const std::vector<float> expected = stage.tensors[t].value.to_vector<float>();
      const std::vector<float> decoded = floats_of(written["tensors"][t]["f32"]);
      REQUIRE(decoded.size() == expected.size());
      CHECK(std::memcmp(decoded.data(), expected.data(), expected.size() * sizeof(float)) == 0);  // -inf too
    }
    REQUIRE(written["gradients"].size() == stage.gradients.size());
    for (size_t g = 0; g < stage.gradients.size(); ++g) {
      CHECK(written["gradients"][g]["label"] == stage.gradients[g].label);
      const std::vector<float> expected = stage.gradients[g].value.to_vector<float>();
      const std::vector<float> decoded = floats_of(written["gradients"][g]["f32"]);
      REQUIRE(decoded.size() == expected.size());
      CHECK(std::memcmp(decoded.data(), expected.data(), expected.size() * sizeof(float)) == 0);
    }
    saw_attention |= stage.id == "block1.mask";
  }
  CHECK(saw_attention);
  CHECK(body["stages"][body["stages"].size() - 2]["gradients"].size() == 1);  // the logits
  REQUIRE(body["loss"].is_object());
  CHECK(body["loss"]["loss"].get<double>() == walkthrough.loss->loss);
  CHECK(body["loss"]["gradients"].size() == walkthrough.loss->gradients.size());
  CHECK(body["predictions"].size() == 7);
  CHECK(body["predictions"][0]["top"].size() == 5);
  CHECK(body["causality"]["max_change_earlier"].get<double>() == walkthrough.causality.max_change_earlier);
}

TEST_CASE("walkthrough_json: a stage over the bound is left out, and says so; no target, no loss") {
  GPT model(testing::tiny_walkthrough_config(), 3);
  const tokenizer::TextTokenizer tokenizer = testing::tiny_tokenizer();
  const WalkthroughOptions options;
  const Walkthrough walkthrough = walk_through(model, tokenizer, "abcd", options);
  const int64_t bound = 4 * 13 - 1;  // below the logits' 4 positions x 13 tokens
  const json body = json::parse(walkthrough_json(walkthrough, options, {.max_stage_values = bound}));
  CHECK(body["loss"].is_null());
  CHECK(body["layer"].is_null());
  REQUIRE(body["stages"].size() == walkthrough.stages.size());
  int64_t omitted = 0;
  for (size_t s = 0; s < walkthrough.stages.size(); ++s) {
    const json& stage = body["stages"][s];
    CAPTURE(stage["id"]);
    int64_t values = 0;
    for (const ShownTensor& shown : walkthrough.stages[s].tensors) values += shown.value.numel();
    CHECK(stage["omitted"] == (values > bound));
    CHECK(stage["tensors"].empty() == (values > bound));
    omitted += values > bound;
    if (stage["id"] == "logits" || stage["id"] == "probabilities") CHECK(stage["omitted"] == true);
    if (stage["id"] == "tokens") CHECK(stage["omitted"] == false);
  }
  CHECK(omitted < static_cast<int64_t>(walkthrough.stages.size()));
}
