// The exceptions of the tokenizer/ layer.
//
// They derive from tg::Error (tensor/error.h), the one error base of the
// project, so a caller that adds no context lets them pass: catching tg::Error
// catches these too. Every message names what is wrong and where: the file and
// line, the character and its position, or the token id and its index.
#pragma once

#include <cstddef>
#include <string>

#include "tinygpt/tensor/error.h"

namespace tg::tokenizer {

// Base of every error thrown by tokenizer/: catch this to catch them all.
class TokenizerError : public Error {
 public:
  using Error::Error;
};

// A vocabulary or merges file that is missing, malformed, truncated or
// inconsistent. The message starts with the file's path (and line, if any).
class TokenizerFileError : public TokenizerError {
 public:
  using TokenizerError::TokenizerError;
};

// A merge that does not fit its vocabulary. Carries the merge's index (0 for
// the first) so a file reader can turn it into a line number.
class MergeError : public TokenizerError {
 public:
  MergeError(const std::string& message, std::size_t merge_index)
      : TokenizerError(message), merge_index_(merge_index) {}
  std::size_t merge_index() const { return merge_index_; }

 private:
  std::size_t merge_index_;
};

// Text that cannot be encoded: a character outside a char-level vocabulary,
// or bytes that are not valid UTF-8 where UTF-8 is required.
class EncodeError : public TokenizerError {
 public:
  using TokenizerError::TokenizerError;
};

// Ids that cannot be decoded: an id outside the vocabulary.
class DecodeError : public TokenizerError {
 public:
  using TokenizerError::TokenizerError;
};

}  // namespace tg::tokenizer
