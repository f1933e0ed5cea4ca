// The syntax tree of a parsed template: expressions and statements.
//
// Nodes are generic records (a kind, a line, and the fields that kind uses,
// listed beside each kind) rather than a class per node: the evaluator is one
// switch per tree, which keeps every rule of the language in one place.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/tokenizer/jinja/value.h"

namespace tg::tokenizer::jinja {

struct Expr;
struct Stmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct Expr {
  enum class Kind {
    Literal,      // value
    Name,         // name
    List,         // operands: the items
    Tuple,        // operands: the items
    Dict,         // operands: key, value, key, value, ...
    Attribute,    // operands[0].name
    Subscript,    // operands[0][operands[1]]
    Slice,        // operands[0][operands[1]:operands[2]:operands[3]] (null when left out)
    Call,         // operands[0](operands[1...], keywords)
    Filter,       // operands[0] | name(operands[1...], keywords)
    Test,         // operands[0] is [not] name(operands[1...])
    Not,          // not operands[0]
    Negate,       // -operands[0]
    Plus,         // +operands[0]
    Binary,       // operands[0] op operands[1]: + - * / // % ** ~ and or
    Compare,      // operands[0] ops[0] operands[1] ops[1] operands[2] ...: == != < <= > >= in "not in"
    Conditional,  // operands[1] if operands[0] else operands[2] (null: undefined)
  };
  Kind kind;
  int line;
  Value value;
  std::string name;                // a Name, Attribute, Filter or Test name; a Binary's operator
  std::vector<std::string> ops;    // a Compare's operators
  bool negated = false;            // "is not"
  std::vector<ExprPtr> operands;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
};

struct Stmt {
  enum class Kind {
    Text,      // text
    Output,    // {{ expr }}
    If,        // branches: (condition, body)...; else_body
    For,       // targets in expr [if condition]: body; else_body
    Set,       // targets = expr, or target.attribute = expr (attribute non-empty)
    SetBlock,  // {% set targets[0] %}body{% endset %}
    Macro,     // text(parameters) body: text is the macro's name
    Break,
    Continue,
  };
  Kind kind;
  int line;
  std::string text;
  std::vector<std::string> targets;
  std::string attribute;
  ExprPtr expr;
  ExprPtr condition;
  Body body;
  Body else_body;
  std::vector<std::pair<ExprPtr, Body>> branches;
  std::vector<std::pair<std::string, ExprPtr>> parameters;  // a macro's, with defaults (null: none)
};

}  // namespace tg::tokenizer::jinja
