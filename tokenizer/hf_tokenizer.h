// A Hugging Face tokenizer.json (the `tokenizers` library's format), id for id
// the same as the Rust library on the files Llama 3, Qwen 2/3, SmolLM2
// (byte-level BPE) and Llama 2, Mistral, TinyLlama (SentencePiece-style BPE
// with byte fallback) ship.
//
// encode(text):
//   1. added tokens ("<|im_end|>", "<s>") are found in the raw text
//      (hf_added_tokens.h); each becomes its id;
//   2. the text between them is normalized (hf_normalizers.h: NFC, Prepend,
//      Replace), cut into pieces (hf_pre_tokenizers.h: Split regex,
//      ByteLevel, Metaspace, Digits), and each piece encoded by the BPE model
//      (hf_bpe_model.h);
//   3. with add_special_tokens, the post-processor's template adds its tokens
//      around the ids (Llama 2: "<s>" first).
// decode(ids): the tokens' texts through the decoders (hf_decoders.h).
//
// Whatever a file asks for that is not supported (a WordPiece or Unigram
// model, a BertNormalizer, ...) is refused when it is read, with a
// TokenizerFileError naming the file and the field; so is a file that
// contradicts itself (a merge naming an unknown token, an id out of range, a
// regex that does not compile). Text that is not valid UTF-8 is read with
// each bad byte as U+FFFD, as Rust's String::from_utf8_lossy does.
//
// A tokenizer is cheap to copy (its tables are shared) and read-only, so one
// tokenizer may serve many threads at once.
#pragma once

#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tinygpt/tokenizer/token_id.h"

namespace tg::tokenizer {

inline constexpr const char* hf_tokenizer_file_name = "tokenizer.json";
inline constexpr const char* hf_tokenizer_config_file_name = "tokenizer_config.json";
// tokenizer.json files beyond this size are refused before they are read
// (Qwen 3's is 11 MB, Llama 3's 9 MB).
inline constexpr std::uintmax_t hf_max_tokenizer_file_bytes = std::uintmax_t{64} << 20;

// Whether `directory` holds a tokenizer.json.
bool has_hf_tokenizer(const std::filesystem::path& directory);

class HfTokenizer {
 public:
  // Reads directory/tokenizer.json and, if present, directory/tokenizer_config.json
  // (for the names of the bos and eos tokens, and add_bos_token).
  static HfTokenizer load(const std::filesystem::path& directory);
  // The same from the files' texts (a checkpoint carries them). `source` names
  // the tokenizer.json in messages; the config's name is derived from it.
  static HfTokenizer from_texts(std::string tokenizer_json, std::optional<std::string> tokenizer_config_json,
                                const std::string& source = hf_tokenizer_file_name);

  // With add_special_tokens, the post-processor's tokens are added (Llama 2's "<s>").
  // Added tokens in the text ("<|im_end|>") are recognised either way, as in the Rust library.
  std::vector<TokenId> encode(std::string_view text, bool add_special_tokens = true) const;
  void encode_into(std::string_view text, std::vector<TokenId>& ids, bool add_special_tokens = true) const;
  // Throws DecodeError naming the first id that is not a token, and its position.
  std::string decode(std::span<const TokenId> ids, bool skip_special_tokens = false) const;

  // One more than the largest id (model vocabulary and added tokens).
  std::size_t vocab_size() const;
  // An added token's id ("<|im_end|>", "<|eot_id|>") or a vocabulary token's,
  // written as the file writes it ("Ġworld"); nothing if there is none.
  std::optional<TokenId> token_id(std::string_view text) const;
  // A token as the file writes it. Throws DecodeError for an id that is not a token.
  std::string token_text(TokenId id) const;
  bool is_special(TokenId id) const;

  // From tokenizer_config.json ("bos_token", "eos_token"); without it, the eos
  // is the first of "<|endoftext|>", "</s>", "<|end_of_text|>" that is a token.
  std::optional<TokenId> bos_id() const;
  std::optional<TokenId> eos_id() const;
  std::optional<std::string> bos_token() const;
  std::optional<std::string> eos_token() const;
  // tokenizer_config.json's add_bos_token (false when absent). encode() follows
  // the post-processor, as the Rust library does; this says what the model's
  // authors intended, for a caller that builds prompts itself.
  bool add_bos_token() const;

  // The texts it was made from, for saving beside a checkpoint.
  const std::string& tokenizer_json() const;
  const std::optional<std::string>& tokenizer_config_json() const;

  struct Impl;

 private:
  explicit HfTokenizer(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<const Impl> impl_;
};

}  // namespace tg::tokenizer
