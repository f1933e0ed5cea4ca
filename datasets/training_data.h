// What a training run learns from: a tokenizer and the corpus it encoded,
// split by position into train and val (datasets/data.h).
//
// Three ways to get one:
//   char_level_data(text)          the characters of the text are the vocabulary (the classic demo);
//                                  with special tokens (a chat corpus), the characters outside them and
//                                  then the tokens, one id each (CharTokenizer::from_text)
//   tokenized_text_data(text, tok) a small text encoded in memory with a given tokenizer (GPT-2's BPE, ...)
//   prepared_data(dir)             a corpus tokenised ahead by `tinygpt prepare`, memory-mapped
//                                  (datasets/token_dataset.h)
//   conversation_data(files, tok)  conversations for chat SFT, the loss on the assistant's tokens only
//                                  (datasets/conversation_data.h)
// The tokenizer travels into the run's checkpoints, so a model trained on any
// of them samples and evaluates without its data.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "tinygpt/datasets/conversation_split.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/data_source.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

// The conversation form of the data: whole conversations, one a row, the loss
// on the assistant's tokens only (datasets/conversation_split.h).
struct ConversationSplits {
  ConversationSplit train;
  ConversationSplit val;
};

struct TrainingData {
  tokenizer::TextTokenizer tokenizer;
  TokenSplits splits;  // with conversations: each split's conversations' ids, one after another
  std::string description;  // for the run's header line: where the ids came from
  std::optional<DataSource> source;  // recorded in checkpoints; none for data made in memory (tests)
  std::optional<ConversationSplits> conversations;  // chat SFT: the batches are conversations, not windows
};

// Throws tg::Error when the text is empty or not valid UTF-8, or a special
// token cannot be one (empty, given twice, ...).
TrainingData char_level_data(const std::string& text, std::vector<std::string> special_tokens = {});
// Throws tg::Error naming the problem when the tokenizer cannot encode the text.
TrainingData tokenized_text_data(const std::string& text, tokenizer::TextTokenizer tokenizer);
// With its conversation form when it is a dataset of conversations (datasets/conversation_dataset.h).
// Throws tg::Error naming the file when the dataset is incomplete or inconsistent.
TrainingData prepared_data(const std::string& directory);

}  // namespace tg
