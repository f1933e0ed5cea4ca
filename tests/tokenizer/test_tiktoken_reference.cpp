// Bit-exactness with tiktoken: every case of the committed fixture
// tests/fixtures/tokenizer/tiktoken_gpt2.json, written by
// tests/reference/tiktoken_reference.sh with npm's tiktoken, must encode to
// the same ids and decode back to the same text.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/tokenizer/tokenizer_test_support.h"

using namespace tg::tokenizer;

TEST_CASE("every fixture case matches tiktoken's gpt2 ids") {
  GPT2_OR_SKIP();
  const std::filesystem::path fixture_path = "tests/fixtures/tokenizer/tiktoken_gpt2.json";
  REQUIRE_MESSAGE(std::filesystem::exists(fixture_path), "run the tests from the project root");
  const nlohmann::json fixture = nlohmann::json::parse(testing::read_file(fixture_path));
  const nlohmann::json& cases = fixture.at("cases");
  REQUIRE(cases.size() > 500);

  std::size_t mismatches = 0;
  for (const nlohmann::json& reference : cases) {
    const std::string text = reference.at("text").get<std::string>();
    const auto specials = reference.at("special").get<bool>() ? SpecialTokens::recognised : SpecialTokens::as_text;
    const auto expected = reference.at("ids").get<std::vector<TokenId>>();
    const std::vector<TokenId> ids = testing::gpt2().encode(text, specials);
    if (ids != expected) {
      ++mismatches;
      CAPTURE(nlohmann::json(text).dump());
      CHECK(nlohmann::json(ids).dump() == nlohmann::json(expected).dump());
    }
    CHECK(testing::gpt2().decode(ids) == text);
  }
  CHECK(mismatches == 0);
}
