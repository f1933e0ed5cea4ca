// A PCRE2 regular expression for the patterns of Hugging Face tokenizer.json
// files (Split pre-tokenizers, Replace normalizers), which the Rust library
// runs with Oniguruma. The patterns that ship (Llama 3's, Qwen's, GPT-2's) use
// only syntax the two engines share: \p{L}, \p{N}, \s, (?i:...), (?!...).
//
// Compiled with PCRE2_UTF | PCRE2_UCP, so \s and \d are Unicode's (\s is then
// White_Space, as in Oniguruma), and JIT-compiled when the platform has it.
// The subject must be valid UTF-8 (the caller checks it once per text: PCRE2
// would otherwise re-check the whole subject on every call).
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace tg::tokenizer {

struct TextRange {
  std::size_t start;
  std::size_t end;
};

class HfRegex {
 public:
  // Throws TokenizerFileError "<file>: <field>: the regex '...' does not compile (...)".
  HfRegex(const std::string& pattern, const std::string& file, const std::string& field);

  // The first match in text[start..], or nothing. An empty match is returned as is.
  std::optional<TextRange> find(std::string_view text, std::size_t start) const;

 private:
  std::shared_ptr<void> code_;  // pcre2_code_8, freed by pcre2_code_free
  std::string pattern_;
};

}  // namespace tg::tokenizer
