// GPT-2's vocabulary files, read and written.
//
//   encoder.json  one JSON object: token text -> id, e.g. {"!": 0, ..., "Ġworld": 995,
//                 ..., "<|endoftext|>": 50256}. Token text is the token's bytes
//                 in GPT-2's byte alphabet (byte_alphabet.h), except special
//                 tokens, which are written as themselves: "<|name|>".
//   vocab.bpe     "#version: 0.2", then one merge per line, in rank order:
//                 the two token texts separated by one space ("Ġ t"), and a
//                 final newline.
//
// GPT-2's own files are at ../shared/data/gpt2 in this project, or from
// OpenAI's public GPT-2 release. Trained tokenizers (bpe_trainer.h) are saved
// in the same format and load the same way.
//
// Reading validates everything and throws TokenizerFileError naming the file
// (and line) at fault: unreadable or malformed JSON, a non-integer, duplicate
// or out-of-range id, a character outside the byte alphabet, a malformed or
// unknown merge, a missing final newline (the usual sign of truncation), and
// the vocabulary invariants of bpe_vocabulary.h.
#pragma once

#include <filesystem>
#include <string>

#include "tinygpt/tokenizer/bpe_vocabulary.h"

namespace tg::tokenizer {

inline constexpr const char* encoder_file_name = "encoder.json";
inline constexpr const char* merges_file_name = "vocab.bpe";
// The same two files as Hugging Face names them in a model directory.
inline constexpr const char* hf_encoder_file_name = "vocab.json";
inline constexpr const char* hf_merges_file_name = "merges.txt";

BpeVocabulary read_gpt2_vocabulary(const std::filesystem::path& encoder_json,
                                   const std::filesystem::path& vocab_bpe);

// The two files' contents, e.g. as a checkpoint carries them.
struct Gpt2VocabularyTexts {
  std::string encoder_json;
  std::string vocab_bpe;
};
// Parses the two texts with every check of the files; errors name them as
// `encoder_name` and `merges_name`.
BpeVocabulary parse_gpt2_vocabulary(const Gpt2VocabularyTexts& texts, const std::string& encoder_name,
                                    const std::string& merges_name);
// The texts write_gpt2_vocabulary writes.
Gpt2VocabularyTexts gpt2_vocabulary_texts(const BpeVocabulary& vocabulary);

// Reads encoder.json and vocab.bpe from a directory, or, when those are not
// there, Hugging Face's vocab.json and merges.txt.
BpeVocabulary read_gpt2_vocabulary(const std::filesystem::path& directory);
// Whether a directory holds one of those two pairs.
bool has_gpt2_vocabulary(const std::filesystem::path& directory);

// Writes encoder.json and vocab.bpe (or Hugging Face's vocab.json and
// merges.txt) into a directory (created if needed), in the layout of GPT-2's
// files: ids in order, non-ASCII as \u escapes.
enum class FileNames { openai, hugging_face };
void write_gpt2_vocabulary(const BpeVocabulary& vocabulary, const std::filesystem::path& directory,
                           FileNames names = FileNames::openai);

}  // namespace tg::tokenizer
