// The decoders of a Hugging Face tokenizer.json: how token texts become text.
// Each step maps the list of token texts to a new list; the result is their
// concatenation (without a decoder: joined by spaces, as the Rust library does).
//
//   ByteLevel     GPT-2's alphabet back to bytes         Llama 3, Qwen, GPT-2
//   Replace       a string by another ("▁" -> " ")       Llama 2, Mistral
//   ByteFallback  "<0x0A>" tokens back to their bytes
//   Fuse          all tokens into one
//   Strip         up to `start` / `stop` copies of a character off each end
//   Metaspace     the replacement back to spaces, none at the very start
//   Sequence      the above in order (flattened here)
//
// Unlike the Rust library, bytes that are not valid UTF-8 are kept, not
// replaced by U+FFFD: a streaming printer decodes one token at a time, and a
// token may end inside a character (StreamingDecoder, text_tokenizer.h).
#pragma once

#include <string>
#include <vector>

#include "tinygpt/tokenizer/hf_json.h"

namespace tg::tokenizer {

class HfDecoder {
 public:
  HfDecoder() = default;
  // `field` is the "decoder" node (may be null).
  static HfDecoder read(const HfField& field);

  // Whether decoding is exactly one ByteLevel step: then the text is the
  // concatenation of the tokens' bytes, which HfTokenizer does without strings.
  bool byte_level_only() const { return steps_.size() == 1 && steps_[0].kind == Kind::byte_level; }
  std::string decode(std::vector<std::string> tokens) const;

 private:
  enum class Kind { byte_level, replace, byte_fallback, fuse, strip, metaspace };
  struct Step {
    Kind kind;
    std::string from;  // replace: the pattern; strip: the character; metaspace: the replacement
    std::string to;    // replace: the content
    std::size_t start = 0, stop = 0;  // strip
    bool prepended = true;            // metaspace: prepend_scheme is not "never"
  };
  static void read_into(const HfField& field, std::vector<Step>& steps);

  std::vector<Step> steps_;
  bool present_ = false;  // a decoder is given (else tokens are joined by spaces)
};

}  // namespace tg::tokenizer
