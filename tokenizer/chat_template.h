// Chat templates: turning a conversation (a JSON array of {role, content})
// into the prompt text a chat model was trained on, by rendering the Jinja
// template from its tokenizer_config.json ("chat_template") the way Hugging
// Face's apply_chat_template does. The interpreter is tokenizer/jinja/; this
// file adds the Hugging Face conventions around it: which variables a
// template sees, where the template is found, and ChatML for models without.
//
//   auto text = chat_template_from_config(read_file("tokenizer_config.json"));
//   ChatTemplateOptions options;
//   options.add_generation_prompt = true;
//   std::string prompt = render_chat(text.value_or(chatml_template()), messages, options);
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tinygpt/tokenizer/jinja/errors.h"
#include "tinygpt/tokenizer/jinja/limits.h"
#include "tinygpt/tokenizer/jinja/template.h"

namespace tg::tokenizer {

using jinja::TemplateError;        // a template that fails: syntax, unsupported construct, limit
using jinja::TemplateRaisedError;  // the template refused the conversation with raise_exception

// What apply_chat_template passes besides the messages. A token left unset is
// not passed (undefined in the template), as Hugging Face leaves out special
// tokens a tokenizer does not have.
struct ChatTemplateOptions {
  std::optional<std::string> bos_token;
  std::optional<std::string> eos_token;
  bool add_generation_prompt = false;
  // Tool schemas (a JSON array). Absent, the template sees `tools` as none,
  // as Hugging Face passes tools=None; `documents` is none too.
  std::optional<nlohmann::ordered_json> tools;
  // More variables, e.g. {"enable_thinking": false} for Qwen3; they override
  // the ones above, as apply_chat_template's **kwargs do.
  nlohmann::ordered_json extra_variables = nlohmann::ordered_json::object();
  // Starts every error message: "chat template line 12: ...".
  std::string template_name = "chat template";
  jinja::RenderLimits limits;
};

// Renders `template_text` for `messages` (a JSON array of objects with at
// least "role" and "content"). Throws TemplateError, or TemplateRaisedError
// when the template rejects the conversation (e.g. roles that do not alternate).
std::string render_chat(std::string_view template_text, const nlohmann::ordered_json& messages,
                        const ChatTemplateOptions& options = {});
// The same with a template parsed once (jinja::Template(text, name)), for a
// caller that renders many conversations; options.template_name is not used.
std::string render_chat(const jinja::Template& chat, const nlohmann::ordered_json& messages,
                        const ChatTemplateOptions& options = {});

// The ChatML template Hugging Face used for models without one:
// "<|im_start|>{role}\n{content}<|im_end|>\n" per message, then
// "<|im_start|>assistant\n" when add_generation_prompt is set.
const std::string& chatml_template();

// The chat template in the text of a tokenizer_config.json: its
// "chat_template" string, or from a list of {"name", "template"} the one named
// "default". Nothing when the file has none (or null). Throws TemplateError
// (naming `config_name`) when the file is not JSON or the field is malformed.
std::optional<std::string> chat_template_from_config(std::string_view tokenizer_config_json,
                                                     const std::string& config_name = "tokenizer_config.json");

}  // namespace tg::tokenizer
