// TextTokenizer (char or GPT-2 behind one face) and StreamingDecoder.
#include <doctest/doctest.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/chat_template.h"
#include "tinygpt/tokenizer/text_tokenizer.h"
#include "tinygpt/tokenizer/utf8.h"

using namespace tg::tokenizer;

namespace {

// Feeds every id through a StreamingDecoder and returns the pieces it printed.
std::vector<std::string> stream(const TextTokenizer& tokenizer, const std::vector<int64_t>& ids) {
  StreamingDecoder decoder(tokenizer);
  std::vector<std::string> pieces;
  for (int64_t id : ids) pieces.push_back(decoder.push(id));
  pieces.push_back(decoder.finish());
  return pieces;
}

std::string joined(const std::vector<std::string>& pieces) {
  std::string text;
  for (const std::string& piece : pieces) text += piece;
  return text;
}

}  // namespace

TEST_CASE("TextTokenizer: a char tokenizer encodes, decodes and displays its characters") {
  const TextTokenizer tokenizer(CharTokenizer::from_corpus("ab\n\té"));
  CHECK(std::string(tokenizer.kind()) == "char");
  CHECK(tokenizer.vocab_size() == 5);
  const std::vector<int64_t> ids = tokenizer.encode("ba\né");
  CHECK(ids == std::vector<int64_t>{3, 2, 1, 4});  // sorted by code point: \t \n a b é
  CHECK(tokenizer.decode(ids) == "ba\né");
  CHECK(tokenizer.display(0) == "\\t");
  CHECK(tokenizer.display(1) == "\\n");
  CHECK(tokenizer.display(4) == "é");
  CHECK_THROWS_AS(tokenizer.encode("abc"), EncodeError);
  CHECK_FALSE(tokenizer.end_of_text_id().has_value());
}

TEST_CASE("TextTokenizer: ids outside the vocabulary are a DecodeError, negative ones too") {
  const TextTokenizer tokenizer(CharTokenizer::from_corpus("ab"));
  CHECK_THROWS_AS(tokenizer.decode(std::vector<int64_t>{0, 2}), DecodeError);
  CHECK_THROWS_AS(tokenizer.decode(std::vector<int64_t>{-1}), DecodeError);
}

TEST_CASE("TextTokenizer: GPT-2 recognises <|endoftext|> and shows partial characters as bytes") {
  GPT2_OR_SKIP();
  const TextTokenizer tokenizer(testing::gpt2());
  CHECK(std::string(tokenizer.kind()) == "gpt2");
  CHECK(tokenizer.vocab_size() == 50257);
  CHECK(tokenizer.encode("Hello world") == std::vector<int64_t>{15496, 995});
  CHECK(tokenizer.encode("<|endoftext|>") == std::vector<int64_t>{50256});
  CHECK(tokenizer.end_of_text_id() == 50256);
  CHECK(tokenizer.display(995) == " world");
  // "🤗" is two tokens; the first alone is not a whole UTF-8 character.
  const std::vector<int64_t> emoji = tokenizer.encode("🤗");
  REQUIRE(emoji.size() >= 2);
  CHECK(tokenizer.display(emoji[0]).find("<0x") != std::string::npos);
}

TEST_CASE("StreamingDecoder: never splits a character across prints, and loses nothing") {
  GPT2_OR_SKIP();
  const TextTokenizer tokenizer(testing::gpt2());
  const std::string text = "Smile 🤗 and 中文 ok";
  const std::vector<int64_t> ids = tokenizer.encode(text);
  const std::vector<std::string> pieces = stream(tokenizer, ids);
  CHECK(joined(pieces) == text);
  for (const std::string& piece : pieces) {
    for (size_t offset = 0; offset < piece.size();) {
      const Utf8Char character = decode_utf8_char(piece, offset);
      CHECK_MESSAGE(character.valid, "a printed piece holds a partial character");
      offset += character.length;
    }
  }
}

TEST_CASE("StreamingDecoder: bytes that can never become a character are printed, not held") {
  GPT2_OR_SKIP();
  const TextTokenizer tokenizer(testing::gpt2());
  const std::vector<int64_t> stray = tokenizer.encode("\x80");  // a lone continuation byte
  REQUIRE(stray.size() == 1);
  StreamingDecoder decoder(tokenizer);
  CHECK(decoder.push(stray[0]) == "\x80");
  // A lead byte alone waits for the rest, and finish() hands it over as it is.
  const std::vector<int64_t> lead = tokenizer.encode("\xE4");
  REQUIRE(lead.size() == 1);
  CHECK(decoder.push(lead[0]).empty());
  CHECK(decoder.finish() == "\xE4");
}

TEST_CASE("TextTokenizer: a char tokenizer's special tokens are one id each, found by token_id, and in its JSON") {
  const std::vector<std::string> chatml = {"<|im_start|>", "<|im_end|>"};
  const TextTokenizer tokenizer(CharTokenizer::from_text("<|im_start|>user\nhi<|im_end|>", chatml));
  CHECK(tokenizer.vocab_size() == 9);
  CHECK(tokenizer.token_id("<|im_end|>") == 8);
  CHECK(tokenizer.token_id("<|im_start|>") == 7);
  CHECK_FALSE(tokenizer.token_id("<|eot_id|>").has_value());
  CHECK_FALSE(tokenizer.eos_id().has_value());  // a char-level vocabulary has no bos or eos
  CHECK_FALSE(tokenizer.bos_id().has_value());
  CHECK(tokenizer.encode("hi<|im_end|>") == std::vector<int64_t>{2, 3, 8});
  CHECK(tokenizer.decode(std::vector<int64_t>{2, 3, 8}) == "hi<|im_end|>");
  CHECK(tokenizer.decode(std::vector<int64_t>{2, 3, 8}, /*skip_special_tokens=*/true) == "hi");
  CHECK(tokenizer.display(8) == "<|im_end|>");

  const nlohmann::json json = tokenizer.to_json();
  CHECK(json.dump() == R"({"characters":"\nehirsu","special_tokens":["<|im_start|>","<|im_end|>"],"type":"char"})");
  const TextTokenizer loaded = TextTokenizer::from_json(json);
  CHECK(loaded.to_json().dump() == json.dump());
  CHECK(loaded.token_id("<|im_end|>") == 8);
  CHECK(loaded.encode("<|im_start|>user") == tokenizer.encode("<|im_start|>user"));
}

TEST_CASE("TextTokenizer: a char tokenizer without special tokens writes and reads the JSON it always did") {
  const nlohmann::json old = {{"type", "char"}, {"characters", "\nab"}};  // a checkpoint written before special tokens
  const TextTokenizer loaded = TextTokenizer::from_json(old);
  CHECK(loaded.vocab_size() == 3);
  CHECK(loaded.as_char()->special_tokens().empty());
  CHECK(loaded.to_json().dump() == R"({"characters":"\nab","type":"char"})");
  CHECK(TextTokenizer(CharTokenizer::from_text("ba\n", {})).to_json().dump() == old.dump());
  CHECK_FALSE(loaded.token_id("<|im_end|>").has_value());
}

TEST_CASE("TextTokenizer: malformed special tokens in a checkpoint's JSON are refused by name") {
  const auto with_special_tokens = [](nlohmann::json tokens) {
    return nlohmann::json{{"type", "char"}, {"characters", "ab"}, {"special_tokens", std::move(tokens)}};
  };
  CHECK_THROWS_WITH_AS(TextTokenizer::from_json(with_special_tokens("<|im_end|>")),
                       "the tokenizer's \"special_tokens\" must be an array of strings", TokenizerError);
  CHECK_THROWS_WITH_AS(TextTokenizer::from_json(with_special_tokens({"<|im_end|>", 7})),
                       "the tokenizer's \"special_tokens\" must be an array of strings, but entry 1 is number",
                       TokenizerError);
  CHECK_THROWS_WITH_AS(TextTokenizer::from_json(with_special_tokens({"<|im_end|>", ""})), "special token 1 is empty",
                       TokenizerError);
  CHECK_THROWS_WITH_AS(TextTokenizer::from_json(with_special_tokens({"<|im_end|>", "<|im_end|>"})),
                       "special token 1, \"<|im_end|>\", is given twice", TokenizerError);
  CHECK_THROWS_WITH_AS(TextTokenizer::from_json(with_special_tokens({"a"})),
                       "special token 0, \"a\", is also a character of the vocabulary: that character could never be "
                       "encoded",
                       TokenizerError);
  CHECK_THROWS_AS(TextTokenizer::from_json(with_special_tokens({"\xC3"})), TokenizerError);
  CHECK_THROWS_WITH_AS(TextTokenizer::from_json(with_special_tokens(nlohmann::json::array_t(2000, "<x>"))),
                       "the tokenizer's \"special_tokens\" holds 2000 entries; a char-level vocabulary holds at most 1024",
                       TokenizerError);
}

TEST_CASE("TextTokenizer: ChatML rendered for a char tokenizer with its special tokens is one id per marker") {
  // What cli/chat_format.cpp does for a model without a template: render ChatML, encode, stop on
  // token_id("<|im_end|>").
  const TextTokenizer tokenizer(CharTokenizer::from_text("<|im_start|>user\nhi<|im_end|>assistant", {"<|im_start|>", "<|im_end|>"}));
  ChatTemplateOptions options;
  options.add_generation_prompt = true;
  const std::string text =
      render_chat(chatml_template(), nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])"), options);
  CHECK(text == "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n");
  const std::vector<int64_t> ids = tokenizer.encode(text);
  const int64_t im_start = *tokenizer.token_id("<|im_start|>"), im_end = *tokenizer.token_id("<|im_end|>");
  CHECK(ids.size() == 1 + 4 + 1 + 2 + 1 + 1 + 1 + 9 + 1);
  CHECK(std::count(ids.begin(), ids.end(), im_start) == 2);
  CHECK(std::count(ids.begin(), ids.end(), im_end) == 1);
  CHECK(ids[8] == im_end);
}
