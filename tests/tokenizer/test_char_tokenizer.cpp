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

// Special tokens: ChatML's markers as one id each, after the characters.
namespace {
const std::vector<std::string> chatml_tokens = {"<|im_start|>", "<|im_end|>"};
}  // namespace

TEST_CASE("special tokens: the characters of the text outside them, then the tokens in the order given") {
  const CharTokenizer tokenizer = CharTokenizer::from_text("<|im_start|>user\nhi<|im_end|>", chatml_tokens);
  // No '<', '|' or '>': they occur only inside the special tokens.
  CHECK(tokenizer.characters() == std::vector<char32_t>{U'\n', U'e', U'h', U'i', U'r', U's', U'u'});
  CHECK(tokenizer.special_tokens() == chatml_tokens);
  CHECK(tokenizer.vocab_size() == 9);
  CHECK(tokenizer.special_token_id("<|im_start|>") == TokenId{7});
  CHECK(tokenizer.special_token_id("<|im_end|>") == TokenId{8});
  CHECK_FALSE(tokenizer.special_token_id("<|endoftext|>").has_value());
  CHECK_FALSE(tokenizer.special_token_id("h").has_value());  // characters are not special tokens
  // A '<' written elsewhere is a character of the vocabulary.
  CHECK(CharTokenizer::from_text("a<b<|im_end|>", chatml_tokens).characters() == std::vector<char32_t>{U'<', U'a', U'b'});
  // from_text without special tokens is from_corpus.
  CHECK(CharTokenizer::from_text("hello world", {}).characters() == CharTokenizer::from_corpus("hello world").characters());
}

TEST_CASE("special tokens: encode and decode round trip, and skip_special_tokens leaves them out") {
  const CharTokenizer tokenizer = CharTokenizer::from_text("<|im_start|>user\nhi<|im_end|>", chatml_tokens);
  const std::string text = "<|im_start|>user\nhi<|im_end|>\n<|im_start|>";
  const Ids ids = tokenizer.encode(text);
  CHECK(ids == Ids{7, 6, 5, 1, 4, 0, 2, 3, 8, 0, 7});
  CHECK(tokenizer.decode(ids) == text);
  CHECK(tokenizer.decode(ids, /*skip_special_tokens=*/true) == "user\nhi\n");
  // A text that holds none encodes as it did without special tokens.
  const CharTokenizer plain(tokenizer.characters());
  CHECK(tokenizer.encode("hi\nusers") == plain.encode("hi\nusers"));
  CHECK_THROWS_WITH_AS(tokenizer.decode(Ids{9}), "cannot decode id 9 at position 0: the vocabulary has ids 0..8",
                       DecodeError);
}

TEST_CASE("special tokens: the longest match wins, leftmost first, and a token split across is characters") {
  const CharTokenizer tokenizer(std::vector<char32_t>{U'<', U'|', U'a', U'b', U'>'}, {"<|", "<|a|>", "|>"});
  // ids: < 0, > 1, a 2, b 3, | 4, "<|" 5, "<|a|>" 6, "|>" 7
  CHECK(tokenizer.encode("<|a|>") == Ids{6});      // not "<|" then 'a' then "|>"
  CHECK(tokenizer.encode("<|b|>") == Ids{5, 3, 7});  // "<|a|>" does not fit: the shorter ones do
  CHECK(tokenizer.encode("|<|a") == Ids{4, 5, 2});  // leftmost: "|<" is no token, "<|" starts at 1
  // A special token cut in two (as two pieces of a text encoded apart, or with a character
  // between) is its characters.
  const CharTokenizer chat = CharTokenizer::from_text("<|im_end|> <|im_end >", chatml_tokens);
  const Ids half = chat.encode("<|im_en");
  CHECK(half.size() == 7);
  CHECK(chat.decode(half) == "<|im_en");
  CHECK(chat.encode("<|im_ end|>").size() == 11);
  CHECK(chat.encode("<|im_end|>") == Ids{*chat.special_token_id("<|im_end|>")});
}

TEST_CASE("special tokens: an unknown character is named by its position in the whole text") {
  const CharTokenizer tokenizer = CharTokenizer::from_text("ab<|im_end|>", chatml_tokens);
  // "<|im_end|>" is one id but ten characters: 'é' is character 12, bytes 12 and 13.
  CHECK_THROWS_WITH_AS(tokenizer.encode("a<|im_end|>b\xC3\xA9"),
                       "character '\xC3\xA9' (U+00E9) at character 12 (byte offset 12) is not in the vocabulary of 2 characters",
                       EncodeError);
  CHECK_THROWS_WITH_AS(tokenizer.encode("<|im_end|>\xFF"), "the text is not valid UTF-8: byte 0xFF at byte offset 10",
                       EncodeError);
  CHECK(tokenizer.encode("<|im_end|>\xC3\xA9", U'a') == Ids{3, 0});
}

TEST_CASE("special tokens: the ones that cannot be are refused, naming which") {
  const std::vector<char32_t> ab{U'a', U'b'};
  CHECK_THROWS_WITH_AS(CharTokenizer(ab, {"<s>", ""}), "special token 1 is empty", TokenizerError);
  CHECK_THROWS_WITH_AS(CharTokenizer(ab, {"<s>", "<s>"}), "special token 1, \"<s>\", is given twice", TokenizerError);
  CHECK_THROWS_WITH_AS(CharTokenizer(ab, {"ok", "\xFF"}), "special token 1 is not valid UTF-8: byte 0xFF at byte offset 0",
                       TokenizerError);
  CHECK_THROWS_WITH_AS(CharTokenizer(ab, {"b"}),
                       "special token 0, \"b\", is also a character of the vocabulary: that character could never be encoded",
                       TokenizerError);
  CHECK(CharTokenizer(ab, {"c"}).encode("abc") == Ids{0, 1, 2});  // a character outside the vocabulary may be one
  CHECK_THROWS_WITH_AS(CharTokenizer(ab, {std::string(kMaxCharSpecialTokenBytes + 1, 'x')}),
                       "special token 0, \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...\", has 257 bytes; a special token "
                       "has at most 256",
                       TokenizerError);
  std::vector<std::string> many;
  for (std::size_t i = 0; i <= kMaxCharSpecialTokens; ++i) many.push_back("<" + std::to_string(i) + ">");
  CHECK_THROWS_WITH_AS(CharTokenizer(ab, many), "a char-level vocabulary holds at most 1024 special tokens, not 1025",
                       TokenizerError);
  CHECK_THROWS_WITH_AS(CharTokenizer::from_text("<|im_end|>", chatml_tokens),
                       "the corpus has no character outside its special tokens", EncodeError);
  CHECK_THROWS_AS(CharTokenizer::from_text("ab", {"<s>", "<s>"}), TokenizerError);
}
