// StopTexts: OpenAI's "stop" found across the pieces a reply arrives in.
#include <doctest/doctest.h>

#include <string>
#include <vector>

#include "tinygpt/serve/stop_texts.h"
#include "tinygpt/tensor/error.h"

using tg::serve::StopTexts;

namespace {

struct Passed {
  std::string text;
  bool found = false;
};

// Pushes the pieces in order and returns all that was passed on (with the rest at the end).
Passed pass(std::vector<std::string> stops, const std::vector<std::string>& pieces) {
  StopTexts texts(std::move(stops));
  Passed passed;
  for (const std::string& piece : pieces) passed.text += texts.push(piece);
  passed.found = texts.found();
  passed.text += texts.finish();
  return passed;
}

}  // namespace

TEST_CASE("a stop text inside one piece cuts the reply before it") {
  const Passed passed = pass({"END"}, {"one two END three"});
  CHECK(passed.found);
  CHECK(passed.text == "one two ");
}

TEST_CASE("a stop text split over pieces is found, none of it passed on") {
  const Passed passed = pass({"\n\n"}, {"Hello", "\n", "\nWorld"});
  CHECK(passed.found);
  CHECK(passed.text == "Hello");
  const Passed byte_by_byte = pass({"STOP"}, {"aS", "T", "O", "P", "b"});
  CHECK(byte_by_byte.found);
  CHECK(byte_by_byte.text == "a");
}

TEST_CASE("the end that could start a stop text is held back, then passed on when it does not") {
  StopTexts texts({"abc"});
  CHECK(texts.push("xxab") == "xx");
  CHECK(texts.push("d") == "abd");
  CHECK(texts.push("a") == "");
  CHECK(texts.finish() == "a");  // the reply ended: nothing is a stop text
  CHECK_FALSE(texts.found());
}

TEST_CASE("the earliest of several stop texts wins, and nothing comes after it") {
  StopTexts texts({"world", "lo"});
  CHECK(texts.push("hello world") == "hel");
  CHECK(texts.found());
  CHECK(texts.push("more") == "");
  CHECK(texts.finish() == "");
}

TEST_CASE("without stop texts every piece passes at once") {
  const Passed passed = pass({}, {"a", "b\n", "c"});
  CHECK_FALSE(passed.found);
  CHECK(passed.text == "ab\nc");
}

TEST_CASE("a held-back end is cut between UTF-8 characters") {
  StopTexts texts({"é!"});  // "é" is two bytes
  CHECK(texts.push("café") == "caf");
  CHECK(texts.push("?") == "é?");
}

TEST_CASE("an empty stop text is refused") { CHECK_THROWS_AS(StopTexts({"a", ""}), tg::Error); }
