// The pre-tokenizers of a Hugging Face tokenizer.json: how normalized text is
// cut into pieces that the model then encodes one by one, never across.
//
//   Split       a regex (PCRE2, see hf_regex.h) or string; behaviour Isolated,
//               Removed, MergedWithPrevious, MergedWithNext or Contiguous;
//               invert                                   Llama 3, Qwen 2/3
//   ByteLevel   add_prefix_space; use_regex = GPT-2's pattern (our own scanner,
//               gpt2_pretokenizer.h). Its byte-to-character mapping is not done
//               here: a byte-level model keeps its vocabulary as bytes
//               (hf_bpe_model.h), so pieces stay bytes.     GPT-2, SmolLM2
//   Metaspace   ' ' -> replacement, prepend_scheme first/always/never, split
//                                                        TinyLlama, older Llama 2
//   Digits      runs of digits (or each digit) apart
//   Sequence    the above in order (flattened here)
//
// Others (Whitespace, BertPreTokenizer, Punctuation, ...) are refused by name.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/hf_json.h"
#include "tinygpt/tokenizer/hf_regex.h"

namespace tg::tokenizer {

// Pieces of a text: ranges of `text`, in order, none empty.
struct HfPieces {
  std::string text;
  std::vector<TextRange> ranges;
};

class HfPreTokenizer {
 public:
  HfPreTokenizer() = default;
  // `field` is the "pre_tokenizer" node (may be null).
  static HfPreTokenizer read(const HfField& field);

  // Whether a ByteLevel step is among the steps: the model's vocabulary is then
  // written in GPT-2's byte alphabet.
  bool byte_level() const;

  // Cuts `text` (valid UTF-8) into `pieces`. `at_text_start`: the text begins the
  // whole input (Metaspace's prepend_scheme "first" prepends only there).
  // `scratch` is working memory, reused between calls.
  void pre_tokenize(std::string_view text, bool at_text_start, HfPieces& pieces, HfPieces& scratch) const;

 private:
  enum class Kind { split, byte_level, metaspace, digits };
  enum class Behaviour { isolated, removed, merged_with_previous, merged_with_next, contiguous };
  struct Step {
    Kind kind;
    std::optional<HfRegex> regex;  // split by regex
    std::string literal;           // split by string; metaspace: the replacement
    Behaviour behaviour = Behaviour::isolated;
    bool invert = false;
    bool add_prefix_space = false;  // byte_level
    bool use_regex = false;         // byte_level
    enum class Prepend : std::uint8_t { always, first, never } prepend = Prepend::always;  // metaspace
    bool split = true;               // metaspace
    bool individual_digits = false;  // digits
  };
  static void read_into(const HfField& field, std::vector<Step>& steps);
  void split_pieces(const Step& step, HfPieces& pieces, std::vector<TextRange>& scratch) const;
  static void edit_pieces(const Step& step, bool at_text_start, HfPieces& pieces, HfPieces& scratch);

  std::vector<Step> steps_;
};

}  // namespace tg::tokenizer
