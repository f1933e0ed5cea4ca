// A Jinja template, parsed once and rendered with JSON variables: the
// interpreter behind chat templates (tokenizer/chat_template.h).
//
// It covers the part of Jinja that Hugging Face chat templates use (see
// docs/chat_templates.md for the list) and renders it byte for byte as
// python3-jinja2 does in Hugging Face's environment:
// ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True) with the
// loopcontrols extension (break, continue), raise_exception() as a global and
// tojson replaced by json.dumps(..., ensure_ascii=False).
//
//   Template chat(text, "Qwen3's chat template");
//   std::string prompt = chat.render({{"messages", messages}, {"add_generation_prompt", true}});
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tinygpt/tokenizer/jinja/errors.h"
#include "tinygpt/tokenizer/jinja/limits.h"

namespace tg::tokenizer::jinja {

struct Stmt;

class Template {
 public:
  // Parses `source`. `name` starts every error message ("chat template line 3: ...").
  // Throws TemplateError for a syntax error or an unsupported construct.
  explicit Template(std::string_view source, std::string name = "chat template");

  // Renders with `variables`, a JSON object whose members become the
  // template's variables (keys keep their order, as Python's dicts do).
  // Throws TemplateRaisedError when the template calls raise_exception, and
  // TemplateError when rendering fails or passes one of `limits`.
  std::string render(const nlohmann::ordered_json& variables, const RenderLimits& limits = {}) const;

  const std::string& name() const { return name_; }

 private:
  std::string name_;
  std::shared_ptr<const std::vector<std::unique_ptr<Stmt>>> body_;
};

}  // namespace tg::tokenizer::jinja
