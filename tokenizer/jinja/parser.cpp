// The parser of the Jinja interpreter: recursive descent over the lexer's
// tokens, one function per precedence level as in jinja2's parser.py.
#include "tinygpt/tokenizer/jinja/parser.h"

#include <cerrno>
#include <cstdlib>
#include <initializer_list>

#include "tinygpt/tokenizer/jinja/errors.h"

namespace tg::tokenizer::jinja {

namespace {

using Kind = Token::Kind;

class Parser {
 public:
  Parser(const std::vector<Token>& tokens, const std::string& name) : tokens_(tokens), name_(name) {}

  Body parse() {
    Body body = parse_body({});
    if (current().kind != Kind::End) fail("unexpected '" + current().text + "'");
    return body;
  }

 private:
  // Counts recursion; refuses templates nested past kMaxSyntaxNesting.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& parser) : parser_(parser) {
      if (++parser_.depth_ > kMaxSyntaxNesting)
        parser_.fail("the template nests deeper than " + std::to_string(kMaxSyntaxNesting) + " levels");
    }
    ~DepthGuard() { --parser_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& parser_;
  };

  const Token& current() const { return tokens_[position_]; }
  const Token& peek(std::size_t ahead = 1) const {
    return tokens_[std::min(position_ + ahead, tokens_.size() - 1)];
  }
  [[noreturn]] void fail(const std::string& description) const { throw TemplateError(name_, current().line, description); }

  bool at_operator(const char* op) const { return current().kind == Kind::Operator && current().text == op; }
  bool at_name(const char* word) const { return current().kind == Kind::Name && current().text == word; }
  bool skip_operator(const char* op) {
    if (!at_operator(op)) return false;
    ++position_;
    return true;
  }
  bool skip_name(const char* word) {
    if (!at_name(word)) return false;
    ++position_;
    return true;
  }
  std::string describe(const Token& token) const {
    switch (token.kind) {
      case Kind::End: return "the end of the template";
      case Kind::BlockEnd: return "'%}'";
      case Kind::VariableEnd: return "'}}'";
      case Kind::Text: return "text";
      case Kind::String: return "a string";
      default: return "'" + token.text + "'";
    }
  }
  void expect_operator(const char* op) {
    if (!skip_operator(op)) fail(std::string("expected '") + op + "', found " + describe(current()));
  }
  void expect(Kind kind, const char* what) {
    if (current().kind != kind) fail(std::string("expected ") + what + ", found " + describe(current()));
    ++position_;
  }
  std::string expect_name() {
    if (current().kind != Kind::Name) fail("expected a name, found " + describe(current()));
    return tokens_[position_++].text;
  }

  ExprPtr node(Expr::Kind kind, int line) {
    auto expr = std::make_unique<Expr>();
    expr->kind = kind;
    expr->line = line;
    return expr;
  }
  StmtPtr statement(Stmt::Kind kind, int line) {
    auto stmt = std::make_unique<Stmt>();
    stmt->kind = kind;
    stmt->line = line;
    return stmt;
  }

  // ---- statements ----

  // Statements up to a `{% tag %}` whose name is in `end_tags` (left current).
  Body parse_body(std::initializer_list<const char*> end_tags) {
    DepthGuard guard(*this);
    Body body;
    while (current().kind != Kind::End) {
      const Token& token = current();
      if (token.kind == Kind::Text) {
        auto text = statement(Stmt::Kind::Text, token.line);
        text->text = token.text;
        body.push_back(std::move(text));
        ++position_;
      } else if (token.kind == Kind::VariableBegin) {
        ++position_;
        auto output = statement(Stmt::Kind::Output, token.line);
        output->expr = parse_tuple(true);
        expect(Kind::VariableEnd, "'}}'");
        body.push_back(std::move(output));
      } else if (token.kind == Kind::BlockBegin) {
        const Token& tag = peek();
        if (tag.kind == Kind::Name)
          for (const char* end : end_tags)
            if (tag.text == end) {
              ++position_;
              return body;
            }
        ++position_;
        body.push_back(parse_statement());
      } else {
        fail("unexpected " + describe(token));
      }
    }
    if (end_tags.size() > 0) {
      std::string expected;
      for (const char* end : end_tags) expected += (expected.empty() ? "'" : " or '") + std::string(end) + "'";
      fail("the template ended before " + expected);
    }
    return body;
  }

  // After "{%": one statement up to and including its closing tag.
  StmtPtr parse_statement() {
    const Token& tag = current();
    if (tag.kind != Kind::Name) fail("expected a tag name after '{%', found " + describe(tag));
    const std::string name = tag.text;
    ++position_;
    if (name == "if") return parse_if(tag.line);
    if (name == "for") return parse_for(tag.line);
    if (name == "set") return parse_set(tag.line);
    if (name == "macro") return parse_macro(tag.line);
    if (name == "break" || name == "continue") {
      // As jinja2 refuses when compiling: only in a loop's body (not its else, not a macro's body).
      if (loop_depth_ == 0) throw TemplateError(name_, tag.line, "'" + name + "' outside loop");
      expect(Kind::BlockEnd, "'%}'");
      return statement(name == "break" ? Stmt::Kind::Break : Stmt::Kind::Continue, tag.line);
    }
    for (const char* closing : {"elif", "else", "endif", "endfor", "endset", "endmacro"})
      if (name == closing) throw TemplateError(name_, tag.line, "unexpected '" + name + "' (no block is open that it closes)");
    throw TemplateError(name_, tag.line, "the tag '" + name + "' is not supported");
  }

  // Consumes "endname %}" after parse_body stopped at it.
  void close_block(const char* end_tag) {
    if (!skip_name(end_tag)) fail(std::string("expected '") + end_tag + "'");
    expect(Kind::BlockEnd, "'%}'");
  }

  StmtPtr parse_if(int line) {
    auto stmt = statement(Stmt::Kind::If, line);
    while (true) {
      ExprPtr condition = parse_tuple(false);  // jinja2: no `a if b else c` as an if statement's test
      expect(Kind::BlockEnd, "'%}'");
      Body body = parse_body({"elif", "else", "endif"});
      stmt->branches.emplace_back(std::move(condition), std::move(body));
      if (skip_name("elif")) continue;
      if (skip_name("else")) {
        expect(Kind::BlockEnd, "'%}'");
        stmt->else_body = parse_body({"endif"});
      }
      close_block("endif");
      return stmt;
    }
  }

  StmtPtr parse_for(int line) {
    auto stmt = statement(Stmt::Kind::For, line);
    stmt->targets = parse_targets();
    if (!skip_name("in")) fail("expected 'in' in the for loop, found " + describe(current()));
    stmt->expr = parse_tuple(false);
    if (skip_name("if")) stmt->condition = parse_tuple(true);
    if (at_name("recursive")) fail("recursive for loops are not supported");
    expect(Kind::BlockEnd, "'%}'");
    ++loop_depth_;
    stmt->body = parse_body({"else", "endfor"});
    --loop_depth_;
    if (skip_name("else")) {
      expect(Kind::BlockEnd, "'%}'");
      stmt->else_body = parse_body({"endfor"});
    }
    close_block("endfor");
    return stmt;
  }

  // "x" or "key, value" (optionally in parentheses).
  std::vector<std::string> parse_targets() {
    const bool parenthesised = skip_operator("(");
    std::vector<std::string> targets{expect_name()};
    while (skip_operator(",")) {
      if (current().kind != Kind::Name) break;
      targets.push_back(expect_name());
    }
    if (parenthesised) expect_operator(")");
    return targets;
  }

  StmtPtr parse_set(int line) {
    if (current().kind == Kind::Name && peek().kind == Kind::Operator && peek().text == "." ) {
      auto stmt = statement(Stmt::Kind::Set, line);
      stmt->targets = {expect_name()};
      ++position_;
      stmt->attribute = expect_name();
      expect_operator("=");
      stmt->expr = parse_tuple(true);
      expect(Kind::BlockEnd, "'%}'");
      return stmt;
    }
    std::vector<std::string> targets = parse_targets();
    if (skip_operator("=")) {
      auto stmt = statement(Stmt::Kind::Set, line);
      stmt->targets = std::move(targets);
      stmt->expr = parse_tuple(true);
      expect(Kind::BlockEnd, "'%}'");
      return stmt;
    }
    if (at_operator("|")) fail("filters on a block set are not supported");
    if (targets.size() != 1) fail("a block set assigns one name");
    auto stmt = statement(Stmt::Kind::SetBlock, line);
    stmt->targets = std::move(targets);
    expect(Kind::BlockEnd, "'%}'");
    stmt->body = parse_body({"endset"});
    close_block("endset");
    return stmt;
  }

  StmtPtr parse_macro(int line) {
    auto stmt = statement(Stmt::Kind::Macro, line);
    stmt->text = expect_name();
    expect_operator("(");
    while (!at_operator(")")) {
      if (!stmt->parameters.empty()) expect_operator(",");
      if (at_operator(")")) break;
      std::string parameter = expect_name();
      ExprPtr default_value = skip_operator("=") ? parse_expression(true) : nullptr;
      stmt->parameters.emplace_back(std::move(parameter), std::move(default_value));
    }
    expect_operator(")");
    expect(Kind::BlockEnd, "'%}'");
    const int enclosing_loops = loop_depth_;
    loop_depth_ = 0;
    stmt->body = parse_body({"endmacro"});
    loop_depth_ = enclosing_loops;
    close_block("endmacro");
    return stmt;
  }

  // ---- expressions ----

  // "a" or "a, b" (a tuple without parentheses).
  ExprPtr parse_tuple(bool with_conditional) {
    const int line = current().line;
    ExprPtr first = parse_expression(with_conditional);
    if (!at_operator(",")) return first;
    auto tuple = node(Expr::Kind::Tuple, line);
    tuple->operands.push_back(std::move(first));
    while (skip_operator(",")) {
      if (current().kind == Kind::BlockEnd || current().kind == Kind::VariableEnd) break;
      tuple->operands.push_back(parse_expression(with_conditional));
    }
    return tuple;
  }

  ExprPtr parse_expression(bool with_conditional) {
    DepthGuard guard(*this);
    return with_conditional ? parse_conditional() : parse_or();
  }

  ExprPtr parse_conditional() {
    ExprPtr value = parse_or();
    while (at_name("if")) {
      auto conditional = node(Expr::Kind::Conditional, current().line);
      ++position_;
      ExprPtr condition = parse_or();
      ExprPtr otherwise = skip_name("else") ? parse_conditional() : nullptr;
      conditional->operands.push_back(std::move(condition));
      conditional->operands.push_back(std::move(value));
      conditional->operands.push_back(std::move(otherwise));
      value = std::move(conditional);
    }
    return value;
  }

  ExprPtr binary(const std::string& op, ExprPtr left, ExprPtr right, int line) {
    auto expr = node(Expr::Kind::Binary, line);
    expr->name = op;
    expr->operands.push_back(std::move(left));
    expr->operands.push_back(std::move(right));
    return expr;
  }

  ExprPtr parse_or() {
    ExprPtr left = parse_and();
    while (at_name("or")) {
      const int line = tokens_[position_++].line;
      left = binary("or", std::move(left), parse_and(), line);
    }
    return left;
  }

  ExprPtr parse_and() {
    ExprPtr left = parse_not();
    while (at_name("and")) {
      const int line = tokens_[position_++].line;
      left = binary("and", std::move(left), parse_not(), line);
    }
    return left;
  }

  ExprPtr parse_not() {
    if (at_name("not")) {
      DepthGuard guard(*this);
      auto expr = node(Expr::Kind::Not, tokens_[position_++].line);
      expr->operands.push_back(parse_not());
      return expr;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
    const int line = current().line;
    ExprPtr first = parse_math1();
    ExprPtr compare;
    while (true) {
      std::string op;
      if (current().kind == Kind::Operator &&
          (current().text == "==" || current().text == "!=" || current().text == "<" || current().text == "<=" ||
           current().text == ">" || current().text == ">=")) {
        op = tokens_[position_++].text;
      } else if (skip_name("in")) {
        op = "in";
      } else if (at_name("not") && peek().kind == Kind::Name && peek().text == "in") {
        position_ += 2;
        op = "not in";
      } else {
        break;
      }
      if (!compare) {
        compare = node(Expr::Kind::Compare, line);
        compare->operands.push_back(std::move(first));
      }
      compare->ops.push_back(op);
      compare->operands.push_back(parse_math1());
    }
    return compare ? std::move(compare) : std::move(first);
  }

  ExprPtr parse_math1() {
    ExprPtr left = parse_concat();
    while (at_operator("+") || at_operator("-")) {
      const Token& op = tokens_[position_++];
      left = binary(op.text, std::move(left), parse_concat(), op.line);
    }
    return left;
  }

  ExprPtr parse_concat() {
    ExprPtr left = parse_math2();
    while (at_operator("~")) {
      const int line = tokens_[position_++].line;
      left = binary("~", std::move(left), parse_math2(), line);
    }
    return left;
  }

  ExprPtr parse_math2() {
    ExprPtr left = parse_pow();
    while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
      const Token& op = tokens_[position_++];
      left = binary(op.text, std::move(left), parse_pow(), op.line);
    }
    return left;
  }

  ExprPtr parse_pow() {
    ExprPtr left = parse_unary(true);
    while (at_operator("**")) {
      const int line = tokens_[position_++].line;
      left = binary("**", std::move(left), parse_unary(true), line);
    }
    return left;
  }

  ExprPtr parse_unary(bool with_filter) {
    DepthGuard guard(*this);
    ExprPtr expr;
    if (at_operator("-") || at_operator("+")) {
      expr = node(at_operator("-") ? Expr::Kind::Negate : Expr::Kind::Plus, current().line);
      ++position_;
      expr->operands.push_back(parse_unary(false));
    } else {
      expr = parse_primary();
    }
    expr = parse_postfix(std::move(expr));
    return with_filter ? parse_filters_and_tests(std::move(expr)) : std::move(expr);
  }

  ExprPtr literal(Value value, int line) {
    auto expr = node(Expr::Kind::Literal, line);
    expr->value = std::move(value);
    return expr;
  }

  ExprPtr parse_primary() {
    const Token& token = current();
    switch (token.kind) {
      case Kind::Name: {
        ++position_;
        if (token.text == "true" || token.text == "True") return literal(Value::boolean(true), token.line);
        if (token.text == "false" || token.text == "False") return literal(Value::boolean(false), token.line);
        if (token.text == "none" || token.text == "None") return literal(Value::none(), token.line);
        auto name = node(Expr::Kind::Name, token.line);
        name->name = token.text;
        return name;
      }
      case Kind::String: {
        std::string text;
        while (current().kind == Kind::String) text += tokens_[position_++].text;  // "a" "b" is "ab"
        return literal(Value::string(std::move(text)), token.line);
      }
      case Kind::Integer: {
        ++position_;
        errno = 0;
        char* end = nullptr;
        const long long number = std::strtoll(token.text.c_str(), &end, 10);
        if (errno == ERANGE) throw TemplateError(name_, token.line, "the integer " + token.text + " does not fit in 64 bits");
        return literal(Value::integer(number), token.line);
      }
      case Kind::Float:
        ++position_;
        return literal(Value::floating(std::strtod(token.text.c_str(), nullptr)), token.line);
      case Kind::Operator:
        if (token.text == "(") return parse_parenthesised();
        if (token.text == "[") return parse_list();
        if (token.text == "{") return parse_dict();
        break;
      default: break;
    }
    fail("unexpected " + describe(token) + " in an expression");
  }

  ExprPtr parse_parenthesised() {
    const int line = current().line;
    expect_operator("(");
    if (skip_operator(")")) return node(Expr::Kind::Tuple, line);
    ExprPtr first = parse_expression(true);
    if (skip_operator(")")) return first;
    auto tuple = node(Expr::Kind::Tuple, line);
    tuple->operands.push_back(std::move(first));
    while (skip_operator(",")) {
      if (at_operator(")")) break;
      tuple->operands.push_back(parse_expression(true));
    }
    expect_operator(")");
    return tuple;
  }

  ExprPtr parse_list() {
    auto list = node(Expr::Kind::List, current().line);
    expect_operator("[");
    while (!at_operator("]")) {
      if (!list->operands.empty()) expect_operator(",");
      if (at_operator("]")) break;
      list->operands.push_back(parse_expression(true));
    }
    expect_operator("]");
    return list;
  }

  ExprPtr parse_dict() {
    auto dict = node(Expr::Kind::Dict, current().line);
    expect_operator("{");
    while (!at_operator("}")) {
      if (!dict->operands.empty()) expect_operator(",");
      if (at_operator("}")) break;
      dict->operands.push_back(parse_expression(true));
      expect_operator(":");
      dict->operands.push_back(parse_expression(true));
    }
    expect_operator("}");
    return dict;
  }

  ExprPtr parse_postfix(ExprPtr expr) {
    while (true) {
      if (at_operator(".")) {
        const int line = tokens_[position_++].line;
        if (current().kind == Kind::Integer) {  // foo.0 is foo[0]
          auto subscript = node(Expr::Kind::Subscript, line);
          subscript->operands.push_back(std::move(expr));
          subscript->operands.push_back(parse_primary());
          expr = std::move(subscript);
          continue;
        }
        auto attribute = node(Expr::Kind::Attribute, line);
        attribute->name = expect_name();
        attribute->operands.push_back(std::move(expr));
        expr = std::move(attribute);
      } else if (at_operator("[")) {
        expr = parse_subscript(std::move(expr));
      } else if (at_operator("(")) {
        expr = parse_call(std::move(expr));
      } else {
        return expr;
      }
    }
  }

  ExprPtr parse_subscript(ExprPtr object) {
    const int line = current().line;
    expect_operator("[");
    ExprPtr start = at_operator(":") ? nullptr : parse_expression(true);
    if (!at_operator(":")) {
      expect_operator("]");
      auto subscript = node(Expr::Kind::Subscript, line);
      subscript->operands.push_back(std::move(object));
      subscript->operands.push_back(std::move(start));
      return subscript;
    }
    ++position_;
    ExprPtr stop = at_operator(":") || at_operator("]") ? nullptr : parse_expression(true);
    ExprPtr step;
    if (skip_operator(":")) step = at_operator("]") ? nullptr : parse_expression(true);
    expect_operator("]");
    auto slice = node(Expr::Kind::Slice, line);
    slice->operands.push_back(std::move(object));
    slice->operands.push_back(std::move(start));
    slice->operands.push_back(std::move(stop));
    slice->operands.push_back(std::move(step));
    return slice;
  }

  // "(a, b, key=c)" into `call`'s operands (after the ones it has) and keywords.
  void parse_arguments(Expr& call) {
    expect_operator("(");
    bool first = true;
    while (!at_operator(")")) {
      if (!first) expect_operator(",");
      first = false;
      if (at_operator(")")) break;
      if (at_operator("*") || at_operator("**")) fail("*args and **kwargs in calls are not supported");
      if (current().kind == Kind::Name && peek().kind == Kind::Operator && peek().text == "=") {
        std::string keyword = expect_name();
        ++position_;
        call.keywords.emplace_back(std::move(keyword), parse_expression(true));
      } else {
        if (!call.keywords.empty()) fail("a positional argument follows a keyword argument");
        call.operands.push_back(parse_expression(true));
      }
    }
    expect_operator(")");
  }

  ExprPtr parse_call(ExprPtr callee) {
    auto call = node(Expr::Kind::Call, current().line);
    call->operands.push_back(std::move(callee));
    parse_arguments(*call);
    return call;
  }

  ExprPtr parse_filters_and_tests(ExprPtr expr) {
    while (true) {
      if (at_operator("|")) {
        const int line = tokens_[position_++].line;
        auto filter = node(Expr::Kind::Filter, line);
        filter->name = expect_name();
        while (at_operator(".")) {
          ++position_;
          filter->name += '.';
          filter->name += expect_name();
        }
        filter->operands.push_back(std::move(expr));
        if (at_operator("(")) parse_arguments(*filter);
        expr = std::move(filter);
      } else if (at_name("is")) {
        expr = parse_test(std::move(expr));
      } else if (at_operator("(")) {
        expr = parse_call(std::move(expr));
      } else {
        return expr;
      }
    }
  }

  ExprPtr parse_test(ExprPtr operand) {
    auto test = node(Expr::Kind::Test, tokens_[position_++].line);
    test->negated = skip_name("not");
    test->name = expect_name();
    while (at_operator(".")) {
      ++position_;
      test->name += '.';
      test->name += expect_name();
    }
    test->operands.push_back(std::move(operand));
    if (at_operator("(")) {
      parse_arguments(*test);
    } else {
      const Token& next = current();
      const bool starts_argument =
          (next.kind == Kind::Name || next.kind == Kind::String || next.kind == Kind::Integer ||
           next.kind == Kind::Float || (next.kind == Kind::Operator && (next.text == "[" || next.text == "{"))) &&
          !(next.kind == Kind::Name && (next.text == "else" || next.text == "or" || next.text == "and"));
      if (starts_argument) {
        if (at_name("is")) fail("tests cannot be chained with 'is'");
        test->operands.push_back(parse_postfix(parse_primary()));
      }
    }
    return test;
  }

  const std::vector<Token>& tokens_;
  const std::string& name_;
  std::size_t position_ = 0;
  int depth_ = 0;
  int loop_depth_ = 0;  // for-loop bodies around the current statement
};

}  // namespace

Body parse_template(const std::vector<Token>& tokens, const std::string& template_name) {
  return Parser(tokens, template_name).parse();
}

}  // namespace tg::tokenizer::jinja
