// Fuzzes the GPT-2 vocabulary loader (tokenizer/gpt2_files.h). The input is
// the two files in one: encoder.json, a NUL byte, vocab.bpe (JSON text holds
// no raw NUL; without one, vocab.bpe is empty). A bad pair must be refused with
// TokenizerError. A vocabulary it accepts must write out (as tinygpt saves a
// tokenizer) to texts that read back as themselves, and a tokenizer built on it
// must still give back any bytes it encodes: here, the input's own.
#include <cstdint>
#include <string_view>

#include "tests/fuzz/property.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"

namespace tt = tg::tokenizer;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t separator = input.find('\0');
  const tt::Gpt2VocabularyTexts texts{
      std::string(input.substr(0, separator)),
      separator == std::string_view::npos ? std::string() : std::string(input.substr(separator + 1))};
  tt::BpeVocabulary vocabulary;
  try {
    vocabulary = tt::parse_gpt2_vocabulary(texts, "encoder.json", "vocab.bpe");
  } catch (const tt::TokenizerError&) {
    return 0;  // a clean refusal, naming the file, the line and what is wrong
  }

  const tt::Gpt2VocabularyTexts written = tt::gpt2_vocabulary_texts(vocabulary);
  const tt::Gpt2VocabularyTexts rewritten =
      tt::gpt2_vocabulary_texts(tt::parse_gpt2_vocabulary(written, "encoder.json", "vocab.bpe"));
  tg::fuzz::check_property(rewritten.encoder_json == written.encoder_json && rewritten.vocab_bpe == written.vocab_bpe,
                           "a vocabulary written out reads back as itself");

  const tt::Gpt2Tokenizer tokenizer(std::move(vocabulary));
  for (const tt::SpecialTokens specials : {tt::SpecialTokens::as_text, tt::SpecialTokens::recognised})
    tg::fuzz::check_property(tokenizer.decode(tokenizer.encode(input, specials)) == input,
                             "decode(encode(bytes)) == bytes with any vocabulary the loader accepts");
  return 0;
}
