// The lexer: template text to tokens, with jinja2's whitespace control.
//
// Outside tags the text is one Text token; `{{ ... }}` and `{% ... %}` become
// VariableBegin/BlockBegin, the expression's tokens, and VariableEnd/BlockEnd;
// comments `{# ... #}` vanish. Whitespace is handled here, exactly as jinja2's
// lexer does, because that is where byte-identical output is won or lost:
//   - newlines are normalised to "\n", and one trailing newline of the
//     template is dropped (keep_trailing_newline=False);
//   - `{%-`, `{{-`, `{#-` strip all whitespace before the tag, `-%}`, `-}}`,
//     `-#}` all whitespace after it;
//   - trim_blocks drops the first newline after `%}` and `#}` (not `}}`);
//   - lstrip_blocks drops spaces and tabs between the start of a line and
//     `{%` or `{#` when nothing else precedes it on that line; `{%+` opts out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tg::tokenizer::jinja {

struct Token {
  enum class Kind { Text, BlockBegin, BlockEnd, VariableBegin, VariableEnd, Name, String, Integer, Float, Operator, End };
  Kind kind;
  std::string text;  // a String's decoded value, a Name, an Operator ("//", "(")
  int line;          // 1-based line of the template where the token starts
};

// Hugging Face renders chat templates with trim_blocks and lstrip_blocks on.
struct LexerOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// Throws TemplateError (naming `template_name` and the line) for an unclosed
// tag, comment or string, an unknown character, or a `{% raw %}` block.
std::vector<Token> tokenize(std::string_view source, const std::string& template_name, const LexerOptions& options);

}  // namespace tg::tokenizer::jinja
