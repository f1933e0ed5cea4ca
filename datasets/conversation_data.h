// Training data for chat SFT: conversation files (datasets/conversation_file.h)
// rendered with a chat template, the loss on the assistant's tokens only
// (datasets/assistant_spans.h), as a TrainingData with its conversation form.
//
//   TrainingData data = conversation_data({"train.jsonl", "val.jsonl"}, &model_tokenizer);
//
// With a tokenizer (a checkpoint's, --init-from's, --tokenizer's) its chat
// template renders the conversations: the tokenizer_config.json's for a Hugging
// Face tokenizer, ChatML otherwise. Without one the model is char-level: ChatML,
// and the vocabulary is the characters of the rendered conversations, train and
// val (chat_vocabulary).
//
// Without a val file the last 10% of the file's conversations (at least one) are
// held out for validation, as a text's last 10% are.
#pragma once
#include <string>
#include <vector>

#include "tinygpt/datasets/chat_format.h"
#include "tinygpt/datasets/conversation_file.h"
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

struct ConversationFiles {
  std::string train;          // --data
  std::string val;            // --val-data; empty: the train file's last 10%
  std::string who = "train";  // starts every error: "train: --data FILE line N: ..."
};

// Throws tg::Error naming the file and line at fault (see conversation_file.h,
// assistant_spans.h), and when a file without --val-data has one conversation.
TrainingData conversation_data(const ConversationFiles& files, const tokenizer::TextTokenizer* tokenizer);

// ChatML's turn markers: a char-level chat model holds each as one token.
inline constexpr const char* kChatmlStart = "<|im_start|>";
inline constexpr const char* kChatmlEnd = "<|im_end|>";

// The vocabulary of a chat model trained from scratch: the characters of `corpus`
// (every character of its rendered conversations, the markers aside), then the
// two ChatML markers as one token each, so a turn ends on one id.
tokenizer::TextTokenizer chat_vocabulary(std::string_view corpus);

// Conversations rendered and encoded into one split named `name` (eval's, or a
// run's). `where` names their file: errors say "<where> line N: ...".
ConversationSplit conversation_split(const std::vector<Conversation>& conversations, const ChatFormat& format,
                                     const tokenizer::TextTokenizer& tokenizer, const std::string& name,
                                     const std::string& where);

}  // namespace tg
