// GPT-2's pre-tokenisation. Each expected split below was checked against
// tiktoken's "gpt2" encoding (its token boundaries never cross these cuts).
#include <doctest/doctest.h>

#include <random>

#include "tinygpt/tokenizer/gpt2_pretokenizer.h"

using tg::tokenizer::split_gpt2_pieces;
using Pieces = std::vector<std::string_view>;

TEST_CASE("words keep one leading space; punctuation and digits are their own runs") {
  CHECK(split_gpt2_pieces("Hello world") == Pieces{"Hello", " world"});
  CHECK(split_gpt2_pieces("Hello, I am") == Pieces{"Hello", ",", " I", " am"});
  CHECK(split_gpt2_pieces("abc123def") == Pieces{"abc", "123", "def"});
  CHECK(split_gpt2_pieces(" 42 !?! x") == Pieces{" 42", " !?!", " x"});
  CHECK(split_gpt2_pieces("a.b...c") == Pieces{"a", ".", "b", "...", "c"});
}

TEST_CASE("contractions are lower-case only and split only at the start of a piece") {
  CHECK(split_gpt2_pieces("I'm you're we've they'll she'd it's don't") ==
        Pieces{"I", "'m", " you", "'re", " we", "'ve", " they", "'ll", " she", "'d", " it", "'s", " don", "'t"});
  CHECK(split_gpt2_pieces("x'S 'll") == Pieces{"x", "'", "S", " '", "ll"});
  CHECK(split_gpt2_pieces("?'s") == Pieces{"?'", "s"});
  CHECK(split_gpt2_pieces("'sa'") == Pieces{"'s", "a", "'"});
  CHECK(split_gpt2_pieces("'") == Pieces{"'"});
  CHECK(split_gpt2_pieces("'l") == Pieces{"'", "l"});
}

TEST_CASE("a whitespace run leaves its last character to the word after it") {
  CHECK(split_gpt2_pieces("a  b") == Pieces{"a", " ", " b"});
  CHECK(split_gpt2_pieces("a   b") == Pieces{"a", "  ", " b"});
  CHECK(split_gpt2_pieces("a\n\nb") == Pieces{"a", "\n", "\n", "b"});
  CHECK(split_gpt2_pieces("a \n b") == Pieces{"a", " \n", " b"});
  CHECK(split_gpt2_pieces("a\tb") == Pieces{"a", "\t", "b"});
  CHECK(split_gpt2_pieces("a  ") == Pieces{"a", "  "});  // at the end the run stays whole
  CHECK(split_gpt2_pieces("\n") == Pieces{"\n"});
  CHECK(split_gpt2_pieces(" ") == Pieces{" "});
  CHECK(split_gpt2_pieces("  a") == Pieces{" ", " a"});
}

TEST_CASE("Unicode letters, numbers and spaces are classes, not ASCII") {
  CHECK(split_gpt2_pieces("caf\xC3\xA9 na\xC3\xAFve") == Pieces{"caf\xC3\xA9", " na\xC3\xAFve"});
  // Combining marks (Mn) are not letters: decomposed é splits.
  CHECK(split_gpt2_pieces("cafe\xCC\x81") == Pieces{"cafe", "\xCC\x81"});
  CHECK(split_gpt2_pieces("\xE4\xBD\xA0\xE5\xA5\xBD\xEF\xBC\x8C") == Pieces{"\xE4\xBD\xA0\xE5\xA5\xBD", "\xEF\xBC\x8C"});
  // Ⅻ½ are numbers (Nl, No); Arabic-Indic digits too.
  CHECK(split_gpt2_pieces("x\xE2\x85\xAB\xC2\xBD\xD9\xA3") == Pieces{"x", "\xE2\x85\xAB\xC2\xBD\xD9\xA3"});
  // NBSP is whitespace but not the optional leading space.
  CHECK(split_gpt2_pieces("a\xC2\xA0" "b") == Pieces{"a", "\xC2\xA0", "b"});
  CHECK(split_gpt2_pieces("a \xC2\xA0" "b") == Pieces{"a", " ", "\xC2\xA0", "b"});
  CHECK(split_gpt2_pieces("a  \xC2\xA0 b") == Pieces{"a", "  \xC2\xA0", " b"});
  // ZERO WIDTH SPACE is not whitespace at all: it is a symbol.
  CHECK(split_gpt2_pieces("a\xE2\x80\x8B" "b") == Pieces{"a", "\xE2\x80\x8B", "b"});
  CHECK(split_gpt2_pieces("a \xE2\x80\x8B" "b") == Pieces{"a", " \xE2\x80\x8B", "b"});
  // Emoji with a skin tone and a zero width joiner are one run of symbols.
  CHECK(split_gpt2_pieces(" \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\xE2\x80\x8D!") ==
        Pieces{" \xF0\x9F\x91\x8D\xF0\x9F\x8F\xBD\xE2\x80\x8D!"});
}

TEST_CASE("invalid UTF-8 bytes are symbols and nothing is lost") {
  CHECK(split_gpt2_pieces("ab\xFF\xFE" "cd") == Pieces{"ab", "\xFF\xFE", "cd"});
  CHECK(split_gpt2_pieces(" \x80x") == Pieces{" \x80", "x"});
  CHECK(split_gpt2_pieces("\xC3") == Pieces{"\xC3"});
  CHECK(split_gpt2_pieces("").empty());
}

TEST_CASE("the pieces of any byte string concatenate back to it") {
  std::mt19937 random(7);
  const std::string alphabet = std::string("ab1 '\n\t.sl", 11) + "\xC2\xA0\xE4\xB8\xAD\xFF\x80";
  for (int round = 0; round < 300; ++round) {
    std::string text;
    const int length = static_cast<int>(random() % 40);
    for (int i = 0; i < length; ++i) text += alphabet[random() % alphabet.size()];
    std::string joined;
    for (std::string_view piece : split_gpt2_pieces(text)) {
      REQUIRE_FALSE(piece.empty());
      joined += piece;
    }
    CHECK(joined == text);
  }
}
