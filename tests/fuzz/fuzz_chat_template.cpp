// Fuzzes the Jinja interpreter of chat templates (tokenizer/jinja/template.h)
// with arbitrary bytes as a template, rendered for a small conversation with
// tools, as tokenizer/chat_template.h renders a downloaded chat_template:
//
//   - parsing and rendering either succeed or throw TemplateError (a
//     TokenizerError); anything else escaping is a finding;
//   - the limits hold: the output is never longer than max_output_bytes, and
//     no input runs long (the iteration and work budgets are small here);
//   - rendering is deterministic: a second render gives the same text.
#include <cstdint>
#include <string>
#include <string_view>

#include "tests/fuzz/property.h"
#include "tinygpt/tokenizer/jinja/template.h"

namespace {

namespace jinja = tg::tokenizer::jinja;
using tg::fuzz::check_property;

const nlohmann::ordered_json& variables() {
  static const nlohmann::ordered_json value = nlohmann::ordered_json::parse(R"({
    "messages": [{"role": "system", "content": "Be brief."},
                 {"role": "user", "content": "Ça va? 🤗"},
                 {"role": "assistant", "content": "<think>\nhm\n</think>\n\nOui.",
                  "tool_calls": [{"id": "abcdef123", "function": {"name": "f", "arguments": {"x": [1, 2.5, null]}}}]},
                 {"role": "tool", "content": "42"}],
    "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}],
    "documents": null, "add_generation_prompt": true, "bos_token": "<s>", "eos_token": "</s>"})");
  return value;
}

jinja::RenderLimits small_limits() {
  jinja::RenderLimits limits;
  limits.max_output_bytes = 64 * 1024;
  limits.max_work_bytes = 4 * 1024 * 1024;
  limits.max_loop_iterations = 20000;
  limits.max_list_items = 20000;
  limits.max_call_depth = 16;
  return limits;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  static const jinja::RenderLimits limits = small_limits();
  std::string first;
  try {
    const jinja::Template chat(text, "fuzzed template");
    first = chat.render(variables(), limits);
    check_property(first.size() <= limits.max_output_bytes, "the output stays within max_output_bytes");
    check_property(chat.render(variables(), limits) == first, "rendering twice gives the same text");
  } catch (const jinja::TemplateError&) {
    // Not a template we can render: refused with its line.
  }
  return 0;
}
