// TextTokenizer: whichever tokenizer a model was trained with, behind one face.
//
// A char-level checkpoint carries its characters; a GPT-2 model uses the GPT-2
// byte-level BPE. Sampling, evaluation and the walk-through only need to turn
// text into ids and back, and to show one token readably, so they take this.
// Ids are int64 here, as the model's id tensors are.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tinygpt/tokenizer/char_tokenizer.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"

namespace tg::tokenizer {

class TextTokenizer {
 public:
  explicit TextTokenizer(CharTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
  explicit TextTokenizer(Gpt2Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  // "char" or "gpt2".
  const char* kind() const;
  int64_t vocab_size() const;
  // The char-level tokenizer inside, or nullptr for GPT-2's BPE.
  const CharTokenizer* as_char() const { return std::get_if<CharTokenizer>(&tokenizer_); }
  // The BPE inside, or nullptr for a char-level tokenizer.
  const Gpt2Tokenizer* as_bpe() const { return std::get_if<Gpt2Tokenizer>(&tokenizer_); }
  // The whole tokenizer as JSON, as a checkpoint carries it (so a model needs
  // no files beside it):
  //   {"type": "char", "characters": "\n !$&..."}   the characters in id order
  //   {"type": "bpe", "encoder.json": "...", "vocab.bpe": "..."}   the two files' texts
  // The text is canonical: two tokenizers are the same exactly when their
  // to_json().dump() are equal.
  nlohmann::json to_json() const;
  // Throws TokenizerError saying what is missing or malformed.
  static TextTokenizer from_json(const nlohmann::json& json);

  // The id that ends a document ("<|endoftext|>", 50256 in GPT-2), when the
  // vocabulary has one (a char-level vocabulary has none).
  std::optional<int64_t> end_of_text_id() const;

  // Throws EncodeError (char-level: a character outside the vocabulary, named
  // with its position). GPT-2's "<|endoftext|>" is recognised as its token.
  std::vector<int64_t> encode(std::string_view text) const;
  // The bytes of the tokens. Throws DecodeError naming an id out of range.
  std::string decode(std::span<const int64_t> ids) const;
  // One token for a person to read: its text with control characters escaped
  // ("\n", "\t") and bytes that are not whole UTF-8 characters as "<0xNN>".
  std::string display(int64_t id) const;

 private:
  std::variant<CharTokenizer, Gpt2Tokenizer> tokenizer_;
};

// Prints generated tokens as they come without splitting a UTF-8 character:
// a BPE token can end in the middle of one (GPT-2 splits most emoji over two
// tokens). push() returns the text that is complete so far; finish() returns
// whatever is left (bytes of an unfinished character, as they are).
class StreamingDecoder {
 public:
  explicit StreamingDecoder(const TextTokenizer& tokenizer) : tokenizer_(tokenizer) {}
  std::string push(int64_t id);
  std::string finish();

 private:
  const TextTokenizer& tokenizer_;
  std::string pending_;  // bytes decoded but not yet printed
};

}  // namespace tg::tokenizer
