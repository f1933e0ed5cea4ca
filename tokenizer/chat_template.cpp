// Chat templates with Hugging Face's conventions; see chat_template.h.
#include "tinygpt/tokenizer/chat_template.h"

#include "tinygpt/tensor/io/bounded_json.h"

namespace tg::tokenizer {

std::string render_chat(std::string_view template_text, const nlohmann::ordered_json& messages,
                        const ChatTemplateOptions& options) {
  return render_chat(jinja::Template(template_text, options.template_name), messages, options);
}

std::string render_chat(const jinja::Template& chat, const nlohmann::ordered_json& messages,
                        const ChatTemplateOptions& options) {
  if (!messages.is_array()) throw TemplateError(chat.name(), 1, "the messages must be a JSON array");
  // The variables in the order apply_chat_template builds them:
  // messages, tools, documents, add_generation_prompt, special tokens, kwargs.
  nlohmann::ordered_json variables = nlohmann::ordered_json::object();
  variables["messages"] = messages;
  variables["tools"] = options.tools ? *options.tools : nlohmann::ordered_json(nullptr);
  variables["documents"] = nullptr;
  variables["add_generation_prompt"] = options.add_generation_prompt;
  if (options.bos_token) variables["bos_token"] = *options.bos_token;
  if (options.eos_token) variables["eos_token"] = *options.eos_token;
  if (!options.extra_variables.is_object())
    throw TemplateError(chat.name(), 1, "the extra variables must be a JSON object");
  for (const auto& [key, value] : options.extra_variables.items()) variables[key] = value;
  return chat.render(variables, options.limits);
}

const std::string& chatml_template() {
  static const std::string text =
      "{% for message in messages %}"
      "{{'<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n'}}"
      "{% endfor %}"
      "{% if add_generation_prompt %}"
      "{{ '<|im_start|>assistant\\n' }}"
      "{% endif %}";
  return text;
}

std::optional<std::string> chat_template_from_config(std::string_view tokenizer_config_json, const std::string& config_name) {
  if (json_nests_deeper_than(tokenizer_config_json, kMaxJsonDepth))
    throw TemplateError(config_name, 1, "the JSON nests deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  nlohmann::ordered_json config;
  try {
    config = nlohmann::ordered_json::parse(tokenizer_config_json);
  } catch (const nlohmann::json::exception& error) {
    throw TemplateError(config_name, 1, "not JSON: " + json_error_text(error));
  }
  if (!config.is_object()) throw TemplateError(config_name, 1, "the file is not a JSON object");
  const auto found = config.find("chat_template");
  if (found == config.end() || found->is_null()) return std::nullopt;
  if (found->is_string()) return found->get<std::string>();
  if (found->is_array()) {
    for (const auto& entry : *found) {
      if (!entry.is_object() || !entry.contains("name") || !entry.contains("template") || !entry["name"].is_string() ||
          !entry["template"].is_string())
        throw TemplateError(config_name, 1, "\"chat_template\" lists an entry that is not {\"name\", \"template\"}");
      if (entry["name"] == "default") return entry["template"].get<std::string>();
    }
    throw TemplateError(config_name, 1, "\"chat_template\" lists several templates and none is named \"default\"");
  }
  throw TemplateError(config_name, 1, "\"chat_template\" is neither a string nor a list of {\"name\", \"template\"}");
}

}  // namespace tg::tokenizer
