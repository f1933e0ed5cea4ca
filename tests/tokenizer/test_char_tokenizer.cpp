// The char-level tokenizer: vocabulary by code point, UTF-8 aware, and loud
// about characters it does not know.
#include <doctest/doctest.h>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/char_tokenizer.h"
#include "tinygpt/tokenizer/errors.h"

using namespace tg::tokenizer;
using Ids = std::vector<TokenId>;

TEST_CASE("the vocabulary is the sorted set of a corpus' characters") {
  const CharTokenizer tokenizer = CharTokenizer::from_corpus("hello world");
  CHECK(tokenizer.vocab_size() == 8);
  CHECK(tokenizer.characters() == std::vector<char32_t>{U' ', U'd', U'e', U'h', U'l', U'o', U'r', U'w'});
  CHECK(tokenizer.encode("hello") == Ids{3, 2, 4, 4, 5});
  CHECK(tokenizer.decode(Ids{7, 5, 6, 4, 1}) == "world");
}

TEST_CASE("UTF-8 characters are single tokens ordered by code point") {
  // "né 中😀": é U+00E9 < 中 U+4E2D < 😀 U+1F600, all after ASCII.
  const std::string corpus = "n\xC3\xA9 \xE4\xB8\xAD\xF0\x9F\x98\x80";
  const CharTokenizer tokenizer = CharTokenizer::from_corpus(corpus);
  CHECK(tokenizer.characters() == std::vector<char32_t>{U' ', U'n', 0xE9, 0x4E2D, 0x1F600});
  const Ids ids = tokenizer.encode(corpus);
  CHECK(ids == Ids{1, 2, 0, 3, 4});
  CHECK(tokenizer.decode(ids) == corpus);
}

TEST_CASE("tiny Shakespeare has the usual 65 characters, newline first") {
  if (!std::filesystem::exists(testing::shakespeare_path)) {
    MESSAGE("skipped: ../shared/data/tinyshakespeare.txt not found");
    return;
  }
  const std::string text = testing::read_file(testing::shakespeare_path);
  const CharTokenizer tokenizer = CharTokenizer::from_corpus(text);
  CHECK(tokenizer.vocab_size() == 65);
  CHECK(tokenizer.id_of(U'\n') == std::optional<TokenId>(0));
  CHECK(tokenizer.id_of(U' ') == std::optional<TokenId>(1));
  CHECK(tokenizer.decode(tokenizer.encode(text)) == text);
}

TEST_CASE("an unknown character is an error naming it and where it is") {
  const CharTokenizer tokenizer = CharTokenizer::from_corpus("abc ");
  CHECK_THROWS_WITH_AS(tokenizer.encode("ab \xC3\xA9!"),
                       "character '\xC3\xA9' (U+00E9) at character 3 (byte offset 3) is not in the vocabulary of 4 "
                       "characters",
                       EncodeError);
  CHECK_THROWS_WITH_AS(tokenizer.encode("a\tb"),
                       "character U+0009 at character 1 (byte offset 1) is not in the vocabulary of 4 characters",
                       EncodeError);
}

TEST_CASE("a chosen fallback replaces unknown characters, if it is known itself") {
  const CharTokenizer tokenizer = CharTokenizer::from_corpus("abc ?");
  CHECK(tokenizer.encode("a\xC3\xA9z", U'?') == Ids{2, 1, 1});
  CHECK_THROWS_WITH_AS(tokenizer.encode("a", U'#'), "the fallback character '#' (U+0023) is not in the vocabulary",
                       EncodeError);
}

TEST_CASE("invalid UTF-8 is an error naming the byte, in corpus and text") {
  CHECK_THROWS_WITH_AS(CharTokenizer::from_corpus("ok\xFF"),
                       "the corpus is not valid UTF-8: byte 0xFF at byte offset 2", EncodeError);
  CHECK_THROWS_AS(CharTokenizer::from_corpus(""), EncodeError);
  const CharTokenizer tokenizer = CharTokenizer::from_corpus("abc");
  CHECK_THROWS_WITH_AS(tokenizer.encode("a\xC3"), "the text is not valid UTF-8: byte 0xC3 at byte offset 1",
                       EncodeError);
}

TEST_CASE("decode rejects ids outside the vocabulary") {
  const CharTokenizer tokenizer = CharTokenizer::from_corpus("abc");
  CHECK_THROWS_WITH_AS(tokenizer.decode(Ids{0, 3}), "cannot decode id 3 at position 1: the vocabulary has ids 0..2",
                       DecodeError);
}

TEST_CASE("serialize and deserialize round-trip, and corrupt data is rejected") {
  const CharTokenizer tokenizer = CharTokenizer::from_corpus("zebra \xC3\xA9t\xC3\xA9 \xE4\xB8\xAD");
  const std::string saved = tokenizer.serialize();
  CHECK(saved == " abertz\xC3\xA9\xE4\xB8\xAD");
  const CharTokenizer loaded = CharTokenizer::deserialize(saved);
  CHECK(loaded.characters() == tokenizer.characters());
  CHECK_THROWS_WITH_AS(CharTokenizer::deserialize("abca"),
                       "the serialized vocabulary is not sorted: character 3, 'a' (U+0061), does not come after "
                       "'c' (U+0063)",
                       TokenizerError);
  CHECK_THROWS_AS(CharTokenizer::deserialize("ab\x80"), TokenizerError);
  CHECK_THROWS_AS(CharTokenizer::deserialize(""), TokenizerError);
}

TEST_CASE("a vocabulary can be given as characters, in any order") {
  const CharTokenizer tokenizer(std::vector<char32_t>{U'c', U'a', U'b', U'a'});
  CHECK(tokenizer.vocab_size() == 3);
  CHECK(tokenizer.encode("cab") == Ids{2, 0, 1});
  CHECK_THROWS_AS(CharTokenizer(std::vector<char32_t>{}), TokenizerError);
  CHECK_THROWS_AS(CharTokenizer(std::vector<char32_t>{0xD800}), TokenizerError);
}
