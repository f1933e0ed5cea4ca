// TextTokenizer: whichever tokenizer a model was trained with, behind one face.
//
// A char-level checkpoint carries its characters; a GPT-2 model uses the GPT-2
// byte-level BPE; a model from the Hugging Face hub (Llama, Qwen, SmolLM2)
// its tokenizer.json (hf_tokenizer.h). Sampling, evaluation and the walk-through only need to turn
// text into ids and back, and to show one token readably, so they take this.
// Ids are int64 here, as the model's id tensors are.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "tinygpt/tokenizer/char_tokenizer.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"

namespace tg::tokenizer {

class TextTokenizer {
 public:
  explicit TextTokenizer(CharTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
  explicit TextTokenizer(Gpt2Tokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}
  explicit TextTokenizer(HfTokenizer tokenizer) : tokenizer_(std::move(tokenizer)) {}

  // "char", "gpt2" or "hf".
  const char* kind() const;
  int64_t vocab_size() const;
  // The char-level tokenizer inside, or nullptr.
  const CharTokenizer* as_char() const { return std::get_if<CharTokenizer>(&tokenizer_); }
  // GPT-2's BPE inside (or one trained by bpe-train), or nullptr.
  const Gpt2Tokenizer* as_bpe() const { return std::get_if<Gpt2Tokenizer>(&tokenizer_); }
  // The Hugging Face tokenizer.json inside, or nullptr.
  const HfTokenizer* as_hf() const { return std::get_if<HfTokenizer>(&tokenizer_); }
  // The whole tokenizer as JSON, as a checkpoint carries it (so a model needs
  // no files beside it):
  //   {"type": "char", "characters": "\n !$&..."}   the characters in id order, and when the
  //       vocabulary has special tokens, "special_tokens": ["<|im_start|>", "<|im_end|>"] (ids after them)
  //   {"type": "bpe", "encoder.json": "...", "vocab.bpe": "..."}   the two files' texts
  //   {"type": "hf", "tokenizer.json": "...", "tokenizer_config.json": "..."}   the texts (the config may be absent)
  // The text is canonical: two tokenizers are the same exactly when their
  // to_json().dump() are equal.
  nlohmann::json to_json() const;
  // Throws TokenizerError saying what is missing or malformed.
  static TextTokenizer from_json(const nlohmann::json& json);

  // The id that ends a document ("<|endoftext|>", 50256 in GPT-2; a Hugging
  // Face tokenizer's eos token), when the vocabulary has one (a char-level
  // vocabulary has none).
  std::optional<int64_t> end_of_text_id() const;
  // What chat needs of a Hugging Face tokenizer: its bos and eos (from
  // tokenizer_config.json), and the id of a token named by its text
  // ("<|im_end|>", "<|eot_id|>"). For GPT-2 the eos is "<|endoftext|>" and
  // token_id finds special tokens; a char-level tokenizer has no bos or eos,
  // and token_id finds its special tokens (CharTokenizer::special_tokens).
  std::optional<int64_t> bos_id() const;
  std::optional<int64_t> eos_id() const { return end_of_text_id(); }
  std::optional<std::string> bos_token() const;
  std::optional<std::string> eos_token() const;
  std::optional<int64_t> token_id(std::string_view text) const;

  // Throws EncodeError (char-level: a character outside the vocabulary, named
  // with its position). GPT-2's "<|endoftext|>", a Hugging Face tokenizer's
  // added tokens and a char-level vocabulary's special tokens ("<|im_end|>")
  // are recognised as their tokens.
  // A Hugging Face post-processor's tokens (Llama 2's "<s>" first) are added
  // only when asked (add_special_tokens); the other kinds have none.
  std::vector<int64_t> encode(std::string_view text) const { return encode(text, false); }
  std::vector<int64_t> encode(std::string_view text, bool add_special_tokens) const;
  // The bytes of the tokens. Throws DecodeError naming an id out of range.
  // skip_special_tokens leaves out a Hugging Face tokenizer's special tokens
  // and a char-level vocabulary's.
  std::string decode(std::span<const int64_t> ids, bool skip_special_tokens = false) const;
  // One token for a person to read: its text with control characters escaped
  // ("\n", "\t") and bytes that are not whole UTF-8 characters as "<0xNN>".
  // An id that is no token of this tokenizer (a padded row of a model's table) shows as "<no token N>".
  std::string display(int64_t id) const;
  // The bytes one token adds to a text it continues. decode() of a lone token
  // can differ: Llama 2's decoder drops the space that starts a text, so
  // "▁world" alone is "world" but " world" after another token.
  std::string continuation_bytes(int64_t id) const;

 private:
  std::variant<CharTokenizer, Gpt2Tokenizer, HfTokenizer> tokenizer_;
};

// The tokenizer a directory holds: a Hugging Face tokenizer.json (with its
// tokenizer_config.json, if there) when present, else GPT-2's encoder.json and
// vocab.bpe (or vocab.json and merges.txt). Throws TokenizerFileError naming
// what is missing or malformed.
TextTokenizer load_tokenizer_directory(const std::filesystem::path& directory);

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
  std::string pending_;      // bytes decoded but not yet printed
  bool printed_any_ = false;  // a token came before: the next continues the text
};

}  // namespace tg::tokenizer
