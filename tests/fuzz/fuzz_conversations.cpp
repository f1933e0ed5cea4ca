// Fuzzes chat SFT's reading of a stranger's conversations (datasets/conversation_file.h)
// and their rendering for training (datasets/assistant_spans.h), as
// `train --data FILE.jsonl` does for a char-level model: JSON Lines parsed with
// its bounds, each conversation rendered with ChatML, its assistant spans found,
// the char vocabulary (ChatML's markers one token each) built from the
// rendering and the ids encoded with their mask. Every fault must be a tg::Error;
// what is accepted must keep the properties training relies on: spans inside
// the text, in order and apart, each holding some text; one mask entry per id,
// at least one id trained; and the trained ids decoding to exactly the spans' text.
#include <cstdint>
#include <string>
#include <string_view>

#include "tinygpt/datasets/assistant_spans.h"
#include "tinygpt/datasets/chat_format.h"
#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/datasets/conversation_file.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/jinja/template.h"
#include "tests/fuzz/property.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const tg::ChatFormat format = tg::chatml_format();
  static const tg::tokenizer::jinja::Template chat(format.template_text);
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    for (const tg::Conversation& conversation : tg::parse_conversations(text, "fuzz")) {
      const tg::RenderedForTraining rendered = tg::render_for_training(chat, format, conversation.messages, "fuzz");
      size_t previous_end = 0;
      std::string spans_text;
      for (const tg::TextSpan& span : rendered.trained) {
        tg::fuzz::check_property(span.begin >= previous_end && span.begin < span.end && span.end <= rendered.text.size(),
                                 "the assistant spans lie inside the text, in order, apart and non-empty");
        spans_text += rendered.text.substr(span.begin, span.end - span.begin);
        previous_end = span.end;
      }
      tg::fuzz::check_property(!rendered.trained.empty(), "a conversation accepted has an assistant span");
      const tg::tokenizer::TextTokenizer vocabulary = tg::chat_vocabulary(rendered.text);
      const tg::MaskedIds masked = tg::encode_masked(vocabulary, rendered, "fuzz");
      tg::fuzz::check_property(masked.trained.size() == masked.ids.size(), "one mask entry per id");
      std::vector<int64_t> trained_ids;
      for (size_t i = 0; i < masked.ids.size(); ++i)
        if (masked.trained[i]) trained_ids.push_back(masked.ids[i]);
      tg::fuzz::check_property(vocabulary.decode(trained_ids) == spans_text,
                               "the trained ids decode to exactly the assistant spans' text");
    }
  } catch (const tg::Error&) {
    return 0;  // a clean refusal, naming the line and what is wrong
  }
  return 0;
}
