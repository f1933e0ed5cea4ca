// OpenAI's "stop": texts that end a reply when it would contain one of them.
//
// The reply arrives a piece at a time (a token's text), and a stop text may
// straddle pieces ("\n\n" as "\n" + "\n"). So the end of the text that could be
// the start of a stop text is held back until the next piece says whether it
// is; what is passed on never holds a stop text nor any part of the one found.
//
//   StopTexts stops({"\n\n", "END"});
//   send(stops.push("Hello\n"));   // "Hello" ("\n" is held back)
//   send(stops.push("\nmore"));    // "" : found, stops.found() is true
//   send(stops.finish());          // at the end of a reply without a stop: what was held back
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace tg::serve {

class StopTexts {
 public:
  explicit StopTexts(std::vector<std::string> texts);  // none empty

  // The text that can be passed on now: all of `piece` and what was held back,
  // but an end that could begin a stop text, and nothing from a found stop text on.
  std::string push(std::string_view piece);
  bool found() const { return found_; }
  // What is held back, when the reply ended without a stop text ("" after one).
  std::string finish();

 private:
  std::vector<std::string> texts_;
  std::string held_back_;
  bool found_ = false;
};

}  // namespace tg::serve
