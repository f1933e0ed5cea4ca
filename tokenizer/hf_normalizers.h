// The normalizers of a Hugging Face tokenizer.json: what is done to the text
// (between added tokens) before it is cut into pieces.
//
//   NFC, NFD, NFKC, NFKD   Unicode normalization (utf8proc)       Qwen 2/3: NFC
//   Prepend                a prefix on a non-empty text            Llama 2, Mistral: "▁"
//   Replace                every match of a string or regex        Llama 2: " " -> "▁"
//   Sequence               the above in order (flattened here)
//   null                   nothing
//
// Anything else (BertNormalizer, Lowercase, Precompiled...) is refused when
// the file is read, naming the type: a tokenizer that silently skipped a step
// would give ids that look right and are not.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tinygpt/tokenizer/hf_json.h"
#include "tinygpt/tokenizer/hf_regex.h"

namespace tg::tokenizer {

class HfNormalizer {
 public:
  HfNormalizer() = default;
  // `field` is the "normalizer" node (may be null).
  static HfNormalizer read(const HfField& field);

  bool empty() const { return steps_.empty(); }
  // Normalizes `text` (valid UTF-8) in place.
  void normalize(std::string& text) const;

 private:
  enum class Kind { nfc, nfd, nfkc, nfkd, prepend, replace };
  struct Step {
    Kind kind;
    std::string text;               // prepend: the prefix; replace: the replacement
    std::string literal;            // replace with a String pattern
    std::optional<HfRegex> regex;   // replace with a Regex pattern
  };
  static void read_into(const HfField& field, std::vector<Step>& steps);

  std::vector<Step> steps_;
};

// Replaces every occurrence of `from` (non-empty) in `text` by `to`.
void replace_all(std::string& text, std::string_view from, std::string_view to);

}  // namespace tg::tokenizer
