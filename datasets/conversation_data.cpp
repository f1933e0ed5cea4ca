#include "tinygpt/datasets/conversation_data.h"

#include <algorithm>

#include "tinygpt/datasets/assistant_spans.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/data_source.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg {

namespace {

constexpr double kValFraction = 0.1;  // of a file's conversations, without --val-data

std::string line_of(const std::string& where, const Conversation& conversation) {
  return where + " line " + std::to_string(conversation.line);
}

std::vector<RenderedForTraining> render_all(std::span<const Conversation> conversations, const ChatFormat& format,
                                            const tokenizer::jinja::Template& chat, const std::string& where) {
  std::vector<RenderedForTraining> rendered;
  rendered.reserve(conversations.size());
  for (const Conversation& conversation : conversations)
    rendered.push_back(render_for_training(chat, format, conversation.messages, line_of(where, conversation)));
  return rendered;
}

ConversationSplit encode_split(std::span<const Conversation> conversations,
                               const std::vector<RenderedForTraining>& rendered,
                               const tokenizer::TextTokenizer& tokenizer, const std::string& name,
                               const std::string& where) {
  std::vector<int64_t> ids, starts{0};
  std::vector<uint8_t> trained;
  for (size_t i = 0; i < rendered.size(); ++i) {
    const MaskedIds masked = encode_masked(tokenizer, rendered[i], line_of(where, conversations[i]));
    check(masked.ids.size() >= 2, line_of(where, conversations[i]), ": renders to ", masked.ids.size(),
          " token; at least 2 make a next-token example");
    ids.insert(ids.end(), masked.ids.begin(), masked.ids.end());
    trained.insert(trained.end(), masked.trained.begin(), masked.trained.end());
    starts.push_back(static_cast<int64_t>(ids.size()));
  }
  return ConversationSplit(TokenSplit(name, ids), std::move(starts), std::move(trained));
}

tokenizer::jinja::Template parsed_template(const ChatFormat& format, const std::string& who) {
  try {
    return tokenizer::jinja::Template(format.template_text, "chat template");
  } catch (const tokenizer::TokenizerError& error) {
    fail(who, ": the chat template (", format.template_source, ") cannot be read: ", error.what());
  }
}

}  // namespace

tokenizer::TextTokenizer chat_vocabulary(std::string_view corpus) {
  try {
    return tokenizer::TextTokenizer(tokenizer::CharTokenizer::from_text(corpus, {kChatmlStart, kChatmlEnd}));
  } catch (const tokenizer::TokenizerError& error) {
    fail("cannot build a character vocabulary from the conversations: ", error.what());
  }
}

ConversationSplit conversation_split(const std::vector<Conversation>& conversations, const ChatFormat& format,
                                     const tokenizer::TextTokenizer& tokenizer, const std::string& name,
                                     const std::string& where) {
  const tokenizer::jinja::Template chat = parsed_template(format, where);
  return encode_split(conversations, render_all(conversations, format, chat, where), tokenizer, name, where);
}

TrainingData conversation_data(const ConversationFiles& files, const tokenizer::TextTokenizer* tokenizer) {
  const std::string train_where = files.who + ": --data " + files.train;
  const std::string val_where = files.val.empty() ? train_where : files.who + ": --val-data " + files.val;
  const std::string train_text = read_text_file(files.train);
  const std::string val_text = files.val.empty() ? std::string() : read_text_file(files.val);
  std::vector<Conversation> train = parse_conversations(train_text, train_where);
  std::vector<Conversation> val;
  if (files.val.empty()) {
    check(train.size() >= 2, train_where, ": holds 1 conversation; at least 2 are needed to hold the last out for ",
          "validation (or give --val-data)");
    const size_t held_out = std::max<size_t>(1, static_cast<size_t>(static_cast<double>(train.size()) * kValFraction));
    val.assign(std::make_move_iterator(train.end() - static_cast<std::ptrdiff_t>(held_out)),
               std::make_move_iterator(train.end()));
    train.resize(train.size() - held_out);
  } else {
    val = parse_conversations(val_text, val_where);
  }

  const ChatFormat format = tokenizer ? chat_format_for(*tokenizer, {}) : chatml_format();
  const tokenizer::jinja::Template chat = parsed_template(format, files.who);
  const std::vector<RenderedForTraining> train_rendered = render_all(train, format, chat, train_where);
  const std::vector<RenderedForTraining> val_rendered = render_all(val, format, chat, val_where);
  const tokenizer::TextTokenizer vocabulary = [&] {
    if (tokenizer) return *tokenizer;
    std::string corpus;
    for (const auto* rendered : {&train_rendered, &val_rendered})
      for (const RenderedForTraining& conversation : *rendered) corpus += conversation.text;
    return chat_vocabulary(corpus);
  }();
  ConversationSplit train_split = encode_split(train, train_rendered, vocabulary, "train", train_where);
  ConversationSplit val_split = encode_split(val, val_rendered, vocabulary, "val", val_where);

  std::string description = files.train + " (" + std::to_string(train.size() + (files.val.empty() ? val.size() : 0)) +
                            " conversations" +
                            (files.val.empty() ? "; val: its last " + std::to_string(val.size()) + " (10%)"
                                               : "; val: " + files.val + " (" + std::to_string(val.size()) + ")") +
                            "; template: " + format.template_source + "; " + vocabulary.kind() + " tokenizer of " +
                            std::to_string(vocabulary.vocab_size()) + " tokens; the loss on the assistant's tokens)";
  TokenSplits splits{train_split.token_split(), val_split.token_split()};
  return TrainingData{vocabulary, std::move(splits), std::move(description),
                      chat_source(files.train, train_text, files.val, val_text),
                      ConversationSplits{std::move(train_split), std::move(val_split)}};
}

}  // namespace tg
