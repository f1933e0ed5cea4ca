// Safe cuts (tokenizer/safe_cuts.h): a text cut where the rules allow, and
// encoded piece by piece, gives exactly the ids of the whole text.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tests/tokenizer/tokenizer_test_support.h"
#include "tinygpt/tokenizer/char_tokenizer.h"
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"
#include "tinygpt/tokenizer/safe_cuts.h"

using namespace tg::tokenizer;
using tg::tokenizer::testing::adversarial_text;
using Pieces = std::vector<std::string_view>;

namespace {

constexpr std::size_t npos = std::string_view::npos;

// The text cut into pieces of at least `piece_bytes`, each ending at the first
// cut `find_cut` allows from there (the last piece ends with the text), as
// `tinygpt prepare` reads a file.
std::vector<std::string_view> cut_into_pieces(std::string_view text, std::size_t piece_bytes,
                                              std::size_t (*find_cut)(std::string_view, std::size_t)) {
  std::vector<std::string_view> pieces;
  while (!text.empty()) {
    const std::size_t cut = find_cut(text, piece_bytes);
    const std::size_t end = cut == npos ? text.size() : cut;
    pieces.push_back(text.substr(0, end));
    text.remove_prefix(end);
  }
  return pieces;
}

std::vector<TokenId> encode_in_pieces(const Gpt2Tokenizer& tokenizer, std::string_view text, std::size_t piece_bytes) {
  std::vector<TokenId> ids;
  for (std::string_view piece : cut_into_pieces(text, piece_bytes, next_gpt2_cut)) tokenizer.encode_into(piece, ids);
  return ids;
}

// Whether cutting at `position` leaves GPT-2's pre-tokens as they are.
bool keeps_pretokens(std::string_view text, std::size_t position) {
  Pieces pieces = split_gpt2_pieces(text.substr(0, position));
  const Pieces rest = split_gpt2_pieces(text.substr(position));
  pieces.insert(pieces.end(), rest.begin(), rest.end());
  return pieces == split_gpt2_pieces(text);
}

}  // namespace

TEST_CASE("the trap: cutting after whitespace can change GPT-2's pre-tokens") {
  // At the end of a text "\n\n" is one piece; before a word it gives its last "\n" to the word's side.
  CHECK_FALSE(keeps_pretokens("a\n\nb", 3));
  CHECK_FALSE(keeps_pretokens("a  b", 3));
  CHECK_FALSE(keeps_pretokens("a \nb", 3));
  // Inside a run of letters or a contraction, obviously.
  CHECK_FALSE(keeps_pretokens("word", 2));
  CHECK_FALSE(keeps_pretokens("we'll", 4));
}

TEST_CASE("GPT-2 cuts fall before whitespace that follows a non-whitespace character") {
  CHECK(next_gpt2_cut("two words", 0) == 3);
  CHECK(next_gpt2_cut("two words", 4) == npos);
  CHECK(next_gpt2_cut("end.\n\nNext", 0) == 4);
  CHECK(next_gpt2_cut("end.\n\nNext", 5) == npos);  // inside the whitespace run
  CHECK(next_gpt2_cut("  lead", 0) == npos);        // no character before the run
  CHECK(next_gpt2_cut("we'll go", 0) == 5);
  CHECK(next_gpt2_cut("it' s", 0) == 3);            // a lone apostrophe before a space
  // Unicode whitespace counts on both sides: NBSP and U+3000 start a run, and end one.
  CHECK(next_gpt2_cut("a\xC2\xA0" "b", 0) == 1);
  CHECK(next_gpt2_cut("\xE3\x80\x80\nb", 0) == npos);
  CHECK(next_gpt2_cut("\xE4\xBD\xA0\xE3\x80\x80", 0) == 3);
  // Bytes that are not UTF-8 are symbols, so a space after one is a cut.
  CHECK(next_gpt2_cut("\x80 x", 0) == 1);
  CHECK(next_gpt2_cut("\xC3 x", 0) == 1);
  // A whitespace character cut short by the end of the text is not one (yet).
  CHECK(next_gpt2_cut("a\xE3\x80", 0) == npos);
  // No text, or only one character: nothing to cut.
  CHECK(next_gpt2_cut("", 0) == npos);
  CHECK(next_gpt2_cut(" ", 0) == npos);
}

TEST_CASE("character cuts never fall inside a UTF-8 sequence") {
  CHECK(next_character_cut("ab", 0) == 1);
  CHECK(next_character_cut("ab", 5) == npos);
  CHECK(next_character_cut("\xC3\xA9", 0) == npos);
  CHECK(next_character_cut("\xC3\xA9x", 0) == 2);
  CHECK(next_character_cut("\xF0\x9F\x98\x80\xC3\xA9", 1) == 4);
}

TEST_CASE("every GPT-2 cut of an adversarial text keeps the pre-tokens") {
  const std::string text = adversarial_text(2000);
  int cuts = 0;
  for (std::size_t position = next_gpt2_cut(text, 0); position != npos; position = next_gpt2_cut(text, position + 1)) {
    CAPTURE(position);
    REQUIRE(keeps_pretokens(text, position));
    ++cuts;
  }
  CHECK(cuts > 100);
}

TEST_CASE("an adversarial text encoded in small pieces gives the ids of the whole") {
  GPT2_OR_SKIP();
  const std::string text = adversarial_text(3000, 7);
  const std::vector<TokenId> whole = testing::gpt2().encode(text);
  for (std::size_t piece_bytes = 1; piece_bytes <= 64; ++piece_bytes) {
    CAPTURE(piece_bytes);
    REQUIRE(encode_in_pieces(testing::gpt2(), text, piece_bytes) == whole);
  }
  CHECK(cut_into_pieces(text, 1, next_gpt2_cut).size() > 500);
}

TEST_CASE("tiny Shakespeare encoded in pieces gives the ids of the whole") {
  GPT2_OR_SKIP();
  const std::string text = testing::read_file(testing::shakespeare_path);
  REQUIRE(text.size() == 1115394);
  const std::vector<TokenId> whole = testing::gpt2().encode(text);
  for (const std::size_t piece_bytes : {1, 100, 4096}) {
    CAPTURE(piece_bytes);
    CHECK(encode_in_pieces(testing::gpt2(), text, piece_bytes) == whole);
  }
}

TEST_CASE("a char-level text cut at character boundaries encodes the same") {
  const std::string text = "caf\xC3\xA9 \xF0\x9F\x98\x80 na\xC3\xAFve\n\xE4\xBD\xA0\xE5\xA5\xBD";
  const CharTokenizer tokenizer = CharTokenizer::from_corpus(text);
  const std::vector<TokenId> whole = tokenizer.encode(text);
  for (std::size_t piece_bytes = 1; piece_bytes <= 8; ++piece_bytes) {
    std::vector<TokenId> ids;
    for (std::string_view piece : cut_into_pieces(text, piece_bytes, next_character_cut)) {
      const std::vector<TokenId> piece_ids = tokenizer.encode(piece);  // throws if a character were split
      ids.insert(ids.end(), piece_ids.begin(), piece_ids.end());
    }
    CHECK(ids == whole);
  }
}
