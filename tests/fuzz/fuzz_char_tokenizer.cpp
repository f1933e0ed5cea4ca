// Fuzzes the char-level tokenizer (tokenizer/char_tokenizer.h) with arbitrary
// bytes, as a corpus, as a text and as a checkpoint's serialized vocabulary:
//
//   - from_corpus refuses an empty or non-UTF-8 corpus with EncodeError, and
//     nothing else; the tokenizer it builds encodes its own corpus, and
//     decoding gives the corpus back;
//   - serialize and deserialize are inverses: deserialize accepts exactly the
//     strings serialize writes (anything else is a TokenizerError);
//   - with a fallback character, a vocabulary of the first half of the text
//     encodes the whole text, one id per character.
#include <cstdint>
#include <optional>
#include <string_view>

#include "tests/fuzz/property.h"
#include "tinygpt/tokenizer/char_tokenizer.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/safe_cuts.h"

namespace {

namespace tt = tg::tokenizer;
using tg::fuzz::check_property;

std::optional<tt::CharTokenizer> vocabulary_of(std::string_view corpus) {
  try {
    return tt::CharTokenizer::from_corpus(corpus);
  } catch (const tt::EncodeError&) {
    return std::nullopt;  // empty, or not UTF-8: the message names the first bad byte
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    check_property(tt::CharTokenizer::deserialize(text).serialize() == text,
                   "deserialize accepts only what serialize writes");
  } catch (const tt::TokenizerError&) {
    // Not a serialized vocabulary (unsorted, repeated or invalid characters).
  }

  const std::optional<tt::CharTokenizer> tokenizer = vocabulary_of(text);
  if (!tokenizer) return 0;
  const std::vector<tt::TokenId> ids = tokenizer->encode(text);
  check_property(tokenizer->decode(ids) == text, "decode(encode(corpus)) == corpus");
  check_property(tt::CharTokenizer::deserialize(tokenizer->serialize()).characters() == tokenizer->characters(),
                 "a vocabulary serialized and read back is the same vocabulary");

  const size_t half = tt::next_character_cut(text, text.size() / 2);
  if (half == std::string_view::npos) return 0;
  const std::optional<tt::CharTokenizer> partial = vocabulary_of(text.substr(0, half));
  check_property(partial.has_value(), "a valid corpus cut at a character boundary is a valid corpus");
  const std::vector<tt::TokenId> with_fallback = partial->encode(text, partial->characters().front());
  check_property(with_fallback.size() == ids.size(), "with a fallback, every character of the text has an id");
  return 0;
}
