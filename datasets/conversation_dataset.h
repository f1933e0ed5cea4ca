// A prepared dataset of conversations: `tinygpt prepare --chat FILE.jsonl`
// renders and encodes a conversation file once (datasets/assistant_spans.h) and
// `train --data DIR` reads it back, as a prepared text is (datasets/token_dataset.h):
//
//   meta.json     with "conversations" (datasets/token_dataset_meta.h)
//   train.bin     every train conversation's ids, one after another
//   train.starts  where each begins: count + 1 int64, little-endian
//   train.mask    a byte per id, 1 where it is the assistant's
//   val.bin, val.starts, val.mask      the last --val-fraction of the conversations (at least one)
//   and the tokenizer's files (encoder.json and vocab.bpe, or tokenizer.json)
//
// The file is read one conversation at a time (a char vocabulary takes a pass
// of its own first); memory holds the file's text and one conversation. The
// ids are read a window at a time while training; the starts and the mask (a
// byte per id) are read whole when the dataset is opened, their hashes checked.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>

#include "tinygpt/datasets/conversation_split.h"
#include "tinygpt/datasets/prepare_tokens.h"
#include "tinygpt/datasets/token_dataset_meta.h"

namespace tg {

inline constexpr const char* kTrainStartsFile = "train.starts";
inline constexpr const char* kTrainMaskFile = "train.mask";
inline constexpr const char* kValStartsFile = "val.starts";
inline constexpr const char* kValMaskFile = "val.mask";

struct PrepareConversationsOptions {
  std::string source;                 // FILE.jsonl (datasets/conversation_file.h)
  DatasetTokenizer tokenizer = DatasetTokenizer::char_level;  // char: ChatML; else its template, or ChatML
  std::string vocabulary_directory;   // gpt2, bpe: encoder.json + vocab.bpe; hf: tokenizer.json (+ config)
  std::string out_directory;          // created if needed
  double val_fraction = 0.1;          // of the conversations: the last ones, at least one
  std::ostream* progress = nullptr;   // a line when it is done with each pass
};

// Throws tg::Error naming the file and line at fault, as train --data FILE.jsonl does.
PrepareSummary prepare_conversation_dataset(const PrepareConversationsOptions& options);

// One split of a prepared dataset of conversations: its ids (`tokens`, the token
// file) with its starts and mask read from `directory`. Throws tg::Error naming
// the file when it is missing, of the wrong size, inconsistent or damaged.
ConversationSplit open_conversation_split(const std::string& directory, const ConversationSplitMeta& meta,
                                          TokenSplit tokens);

}  // namespace tg
