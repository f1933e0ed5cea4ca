// How a loaded model's conversations become ids: the chat template from the
// tokenizer_config.json its tokenizer carries (ChatML for a model without
// one), rendered as Hugging Face's apply_chat_template(..., tokenize=True,
// add_generation_prompt=True) does, and the ids that end a turn.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/tokenizer/chat_template.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

struct ChatFormat {
  std::string template_text;
  std::string template_source;  // for the header: "the model's tokenizer_config.json" or "ChatML ..."
  tokenizer::ChatTemplateOptions options;  // bos_token, eos_token; add_generation_prompt set
  std::vector<int64_t> stop_ids;  // config.json's eos ids, the tokenizer's eos and end-of-turn tokens it has
  // The texts that close an assistant's turn in a rendered conversation: the
  // known end-of-turn tokens ("<|im_end|>", "<|eot_id|>", "</s>", ...) and the eos
  // token. Training looks for the first after an assistant's text (datasets/assistant_spans.h).
  std::vector<std::string> end_of_turn_texts;
};

ChatFormat chat_format_for(const tokenizer::TextTokenizer& tokenizer, const std::vector<int64_t>& model_stop_ids);
// ChatML with no bos or eos token and no stop ids: the format of a char-level
// model, known before its vocabulary is (which comes from the rendered texts).
ChatFormat chatml_format();

// The rendered text of `messages` ({"role", "content"} objects) and its ids
// (encoded without the post-processor's tokens: the template writes them).
// Throws tg::Error naming `command` when the template fails or refuses the conversation.
struct RenderedConversation {
  std::string text;
  std::vector<int64_t> ids;
};
RenderedConversation render_conversation(const ChatFormat& format, const tokenizer::TextTokenizer& tokenizer,
                                         const nlohmann::ordered_json& messages, const char* command);

// Reads {"messages": [{"role": ..., "content": ...}, ...]} (or the array alone)
// from a file. Throws naming the file and what is wrong.
nlohmann::ordered_json read_conversation_file(const std::string& path, const char* command);

}  // namespace tg
