// TextTokenizer (char or GPT-2 behind one face) and StreamingDecoder.
#include <doctest/doctest.h>

#include "tests/tokenizer/tokenizer_test_support.h"
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
