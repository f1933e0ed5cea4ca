#include "tinygpt/datasets/chat_format.h"

#include <algorithm>

#include "tinygpt/datasets/data.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tokenizer/errors.h"

namespace tg {

namespace {

// Tokens that end an assistant's turn in the templates of the families tinygpt reads
// (Llama 3, ChatML for Qwen and SmolLM2, Llama 2 and Mistral, GPT-2).
constexpr const char* kEndOfTurnTokens[] = {"<|eot_id|>", "<|im_end|>", "<|end_of_text|>", "<|endoftext|>", "</s>",
                                             "<|end|>"};

void add_unique(std::vector<int64_t>& ids, int64_t id) {
  if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
}

void check_messages(const nlohmann::ordered_json& messages, const std::string& where) {
  check(messages.is_array() && !messages.empty(), where, ": \"messages\" must be a non-empty array of {\"role\", \"content\"}");
  for (size_t i = 0; i < messages.size(); ++i) {
    const auto& message = messages[i];
    check(message.is_object() && message.contains("role") && message["role"].is_string() &&
              message.contains("content") && message["content"].is_string(),
          where, ": message ", i, " must be an object with a \"role\" and a \"content\" string");
  }
}

}  // namespace

ChatFormat chatml_format() {
  ChatFormat format;
  format.template_text = tokenizer::chatml_template();
  format.template_source = "ChatML (the model has no chat template)";
  format.options.add_generation_prompt = true;
  format.end_of_turn_texts.assign(std::begin(kEndOfTurnTokens), std::end(kEndOfTurnTokens));
  return format;
}

ChatFormat chat_format_for(const tokenizer::TextTokenizer& tokenizer, const std::vector<int64_t>& model_stop_ids) {
  ChatFormat format = chatml_format();
  std::optional<std::string> from_config;
  if (const tokenizer::HfTokenizer* hf = tokenizer.as_hf(); hf && hf->tokenizer_config_json())
    from_config = tokenizer::chat_template_from_config(*hf->tokenizer_config_json());
  if (from_config) {
    format.template_text = *from_config;
    format.template_source = "the model's tokenizer_config.json";
  }
  format.options.bos_token = tokenizer.bos_token();
  format.options.eos_token = tokenizer.eos_token();
  const std::optional<std::string>& eos = format.options.eos_token;
  if (eos && !eos->empty() && std::ranges::find(format.end_of_turn_texts, *eos) == format.end_of_turn_texts.end())
    format.end_of_turn_texts.push_back(*eos);
  format.stop_ids = model_stop_ids;
  if (const std::optional<int64_t> eos = tokenizer.eos_id()) add_unique(format.stop_ids, *eos);
  for (const char* text : kEndOfTurnTokens)
    if (const std::optional<int64_t> id = tokenizer.token_id(text)) add_unique(format.stop_ids, *id);
  return format;
}

RenderedConversation render_conversation(const ChatFormat& format, const tokenizer::TextTokenizer& tokenizer,
                                         const nlohmann::ordered_json& messages, const char* command) {
  check_messages(messages, command);
  RenderedConversation rendered;
  try {
    rendered.text = tokenizer::render_chat(format.template_text, messages, format.options);
    rendered.ids = tokenizer.encode(rendered.text, /*add_special_tokens=*/false);
  } catch (const tokenizer::TokenizerError& error) {
    fail(command, ": ", error.what());
  }
  return rendered;
}

nlohmann::ordered_json read_conversation_file(const std::string& path, const char* command) {
  const std::string where = std::string(command) + ": --chat " + path;
  const std::string text = read_text_file(path);
  check(!json_nests_deeper_than(text, kMaxJsonDepth), where, ": nests deeper than ", kMaxJsonDepth, " levels");
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(text);
  } catch (const nlohmann::json::exception& error) {
    fail(where, ": not valid JSON: ", json_error_text(error));
  }
  const nlohmann::ordered_json messages = json.is_object() && json.contains("messages") ? json["messages"] : json;
  check_messages(messages, where);
  return messages;
}

}  // namespace tg
