// The parser: tokens to a syntax tree, following jinja2's grammar (its
// Parser class) and operator precedence, from loosest to tightest:
//   a if c else b | or | and | not | comparisons, in, not in | + - | ~ |
//   * / // % | ** | unary - + | postfix .attr [index] (call) | filters and tests
// Statements: if/elif/else, for (with else and an `if` filter), set (names,
// ns.attr, and the block form), macro, break and continue. Any other tag is
// refused with its name and line.
#pragma once

#include <string>
#include <vector>

#include "tinygpt/tokenizer/jinja/ast.h"
#include "tinygpt/tokenizer/jinja/lexer.h"

namespace tg::tokenizer::jinja {

// Nesting of expressions and blocks past this is refused: both the parser and
// the evaluator recurse once per level.
inline constexpr int kMaxSyntaxNesting = 128;

// Throws TemplateError naming `template_name` and the line of a syntax error
// or an unsupported construct.
Body parse_template(const std::vector<Token>& tokens, const std::string& template_name);

}  // namespace tg::tokenizer::jinja
