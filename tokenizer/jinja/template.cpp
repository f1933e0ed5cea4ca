// The evaluator: walks the syntax tree, writing text. Scoping follows jinja2:
// each iteration of a for loop has its own scope (a `set` inside a loop is
// gone after it, and even in the next iteration; that is what namespace() is
// for), `if` has none, and a macro sees the template's top-level variables and
// its own arguments. Each expression that fails is reported with its line.
#include "tinygpt/tokenizer/jinja/template.h"

#include <unordered_map>

#include "tinygpt/tokenizer/jinja/ast.h"
#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/jinja/lexer.h"
#include "tinygpt/tokenizer/jinja/parser.h"

namespace tg::tokenizer::jinja {

namespace {

// Recursion of the evaluator (expressions, statements, macro calls) past this
// is refused before it can overflow the stack.
constexpr int kMaxEvaluationDepth = 1000;

struct Frame {
  std::unordered_map<std::string, Value> variables;
  const Frame* parent = nullptr;

  const Value* find(const std::string& name) const {
    for (const Frame* frame = this; frame; frame = frame->parent) {
      auto found = frame->variables.find(name);
      if (found != frame->variables.end()) return &found->second;
    }
    return nullptr;
  }
};

enum class Flow { Normal, Break, Continue };

class Evaluator {
 public:
  Evaluator(const std::string& name, const RenderLimits& limits) : name_(name), budget_(limits) {}

  std::string run(const Body& body, const nlohmann::ordered_json& variables) {
    for (auto& [name, function] : global_functions(budget_)) globals_.variables[name] = std::move(function);
    Frame top{{}, &globals_};
    if (!variables.is_object()) throw TemplateError(name_, 1, "the template's variables must be a JSON object");
    for (const auto& [key, json] : variables.items()) {
      try {
        top.variables[key] = Value::from_json(json);
      } catch (const Failure& failure) {
        throw TemplateError(name_, 1, "the variable '" + key + "': " + failure.what());
      }
    }
    top_ = &top;
    std::string out;
    output_ = &out;
    execute(body, top);
    return out;
  }

 private:
  class DepthGuard {
   public:
    explicit DepthGuard(int& depth) : depth_(depth) {
      if (++depth_ > kMaxEvaluationDepth)
        throw Failure("the template recursed more than " + std::to_string(kMaxEvaluationDepth) + " levels deep");
    }
    ~DepthGuard() { --depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    int& depth_;
  };

  [[noreturn]] void rethrow_at(int line) const {
    try {
      throw;
    } catch (const RaisedFailure& raised) {
      throw TemplateRaisedError(name_, line, raised.what());
    } catch (const Failure& failure) {
      throw TemplateError(name_, line, failure.what());
    }
  }

  // Appends to the output (or to the macro call or block set being captured).
  // Each write is work too: a loop of block sets discards what it writes.
  void write(const std::string& text) {
    if (output_->size() + text.size() > budget_.limits().max_output_bytes)
      throw Failure("the output exceeds " + std::to_string(budget_.limits().max_output_bytes) + " bytes");
    budget_.spend_scan(text.size());
    *output_ += text;
  }

  // ---- statements ----

  Flow execute(const Body& body, Frame& frame) {
    for (const StmtPtr& stmt : body) {
      const Flow flow = execute(*stmt, frame);
      if (flow != Flow::Normal) return flow;
    }
    return Flow::Normal;
  }

  Flow execute(const Stmt& stmt, Frame& frame) {
    try {
      DepthGuard guard(depth_);
      switch (stmt.kind) {
        case Stmt::Kind::Text: write(stmt.text); return Flow::Normal;
        case Stmt::Kind::Output: write(to_text(evaluate(*stmt.expr, frame))); return Flow::Normal;
        case Stmt::Kind::If:
          for (const auto& [condition, body] : stmt.branches)
            if (evaluate(*condition, frame).truthy()) return execute(body, frame);
          return execute(stmt.else_body, frame);
        case Stmt::Kind::For: return execute_for(stmt, frame);
        case Stmt::Kind::Set: execute_set(stmt, frame); return Flow::Normal;
        case Stmt::Kind::SetBlock: {
          std::string captured = capture(stmt.body, frame);
          frame.variables[stmt.targets[0]] = Value::string(std::move(captured));
          return Flow::Normal;
        }
        case Stmt::Kind::Macro: frame.variables[stmt.text] = macro(stmt); return Flow::Normal;
        case Stmt::Kind::Break: return Flow::Break;
        case Stmt::Kind::Continue: return Flow::Continue;
      }
    } catch (const Failure&) {
      rethrow_at(stmt.line);
    }
    return Flow::Normal;
  }

  // Renders `body` into a string of its own (block set, macro call).
  std::string capture(const Body& body, Frame& frame) {
    std::string captured;
    std::string* saved = output_;
    output_ = &captured;
    try {
      execute(body, frame);
    } catch (...) {
      output_ = saved;
      throw;
    }
    output_ = saved;
    return captured;
  }

  // Binds `targets` to `value`: one name, or a tuple unpacked.
  void assign(const std::vector<std::string>& targets, const Value& value, Frame& frame) {
    if (targets.size() == 1) {
      frame.variables[targets[0]] = value;
      return;
    }
    const std::vector<Value> parts = iterate(value, budget_);
    if (parts.size() != targets.size())
      throw Failure(parts.size() < targets.size() ? "not enough values to unpack (expected " + std::to_string(targets.size()) +
                                                        ", got " + std::to_string(parts.size()) + ")"
                                                  : "too many values to unpack (expected " + std::to_string(targets.size()) + ")");
    for (std::size_t i = 0; i < targets.size(); ++i) frame.variables[targets[i]] = parts[i];
  }

  void execute_set(const Stmt& stmt, Frame& frame) {
    Value value = evaluate(*stmt.expr, frame);
    if (stmt.attribute.empty()) {
      assign(stmt.targets, value, frame);
      return;
    }
    const Value* target = frame.find(stmt.targets[0]);
    if (!target || !target->is_namespace()) throw Failure("cannot assign attribute on non-namespace object");
    if (holds_namespace(value, 0)) throw Failure("a namespace cannot hold a namespace");
    target->namespace_attributes().set(stmt.attribute, std::move(value));
  }

  static bool holds_namespace(const Value& value, int depth) {
    if (value.is_namespace()) return true;
    if (depth > kMaxValueNesting) return false;
    if (value.is_list())
      for (const Value& element : value.as_list().items)
        if (holds_namespace(element, depth + 1)) return true;
    if (value.is_dict())
      for (const auto& entry : value.as_dict().entries)
        if (holds_namespace(entry.second, depth + 1)) return true;
    return false;
  }

  Flow execute_for(const Stmt& stmt, Frame& frame) {
    std::vector<Value> items = iterate(evaluate(*stmt.expr, frame), budget_);
    if (stmt.condition) {  // {% for x in xs if cond %}: filtered before loop.length is known
      std::vector<Value> kept;
      for (const Value& element : items) {
        budget_.spend_iteration();
        Frame scope{{}, &frame};
        assign(stmt.targets, element, scope);
        if (evaluate(*stmt.condition, scope).truthy()) kept.push_back(element);
      }
      items = std::move(kept);
    }
    // jinja2 runs the else block unless some iteration reached the end of the
    // body: with no items, and also when every iteration ended in break or continue.
    bool completed_an_iteration = false;
    const auto length = static_cast<int64_t>(items.size());
    for (int64_t index = 0; index < length; ++index) {
      budget_.spend_iteration();
      Frame scope{{}, &frame};
      assign(stmt.targets, items[static_cast<std::size_t>(index)], scope);
      scope.variables["loop"] = loop_object(items, index);
      const Flow flow = execute(stmt.body, scope);
      if (flow == Flow::Normal) completed_an_iteration = true;
      if (flow == Flow::Break) break;
    }
    if (completed_an_iteration) return Flow::Normal;
    Frame else_scope{{}, &frame};  // like the body, the else block keeps its `set`s to itself
    return execute(stmt.else_body, else_scope);
  }

  static Value loop_object(const std::vector<Value>& items, int64_t index) {
    const auto length = static_cast<int64_t>(items.size());
    std::vector<std::pair<std::string, Value>> fields = {
        {"index", Value::integer(index + 1)},
        {"index0", Value::integer(index)},
        {"revindex", Value::integer(length - index)},
        {"revindex0", Value::integer(length - index - 1)},
        {"first", Value::boolean(index == 0)},
        {"last", Value::boolean(index == length - 1)},
        {"length", Value::integer(length)},
        {"depth", Value::integer(1)},
        {"depth0", Value::integer(0)},
        {"previtem", index > 0 ? items[static_cast<std::size_t>(index - 1)] : Value::undefined("there is no previous item")},
        {"nextitem", index + 1 < length ? items[static_cast<std::size_t>(index + 1)] : Value::undefined("there is no next item")},
        {"cycle", Value::callable("loop.cycle", [index](const CallArgs& args) {
           if (args.positional.empty()) throw Failure("no items for cycling given");
           return args.positional[static_cast<std::size_t>(index) % args.positional.size()];
         })},
    };
    return Value::dict(std::move(fields));  // a dict, not a namespace: `set loop.x` is refused as in jinja2
  }

  Value macro(const Stmt& stmt) {
    const Stmt* definition = &stmt;
    return Value::callable(stmt.text, [this, definition](const CallArgs& args) { return call_macro(*definition, args); });
  }

  Value call_macro(const Stmt& definition, const CallArgs& args) {
    if (++macro_depth_ > budget_.limits().max_call_depth) {
      --macro_depth_;
      throw Failure("macros nest more than " + std::to_string(budget_.limits().max_call_depth) + " calls deep");
    }
    struct Unwind {
      int& depth;
      ~Unwind() { --depth; }
    } unwind{macro_depth_};
    const auto& parameters = definition.parameters;
    if (args.positional.size() > parameters.size())
      throw Failure("macro '" + definition.text + "' takes not more than " + std::to_string(parameters.size()) +
                    " argument(s)");
    Frame scope{{}, top_};
    for (const auto& [keyword, value] : args.keywords) {
      bool known = false;
      for (const auto& parameter : parameters) known = known || parameter.first == keyword;
      if (!known) throw Failure("macro '" + definition.text + "' takes no keyword argument '" + keyword + "'");
    }
    for (std::size_t i = 0; i < parameters.size(); ++i) {
      const std::string& parameter = parameters[i].first;
      const Value* given = nullptr;
      for (const auto& [keyword, value] : args.keywords)
        if (keyword == parameter) given = &value;
      if (i < args.positional.size()) given = &args.positional[i];
      if (given) scope.variables[parameter] = *given;
      else if (parameters[i].second) scope.variables[parameter] = evaluate(*parameters[i].second, scope);
      else scope.variables[parameter] = Value::undefined("parameter '" + parameter + "' was not provided");
    }
    return Value::string(capture(definition.body, scope));
  }

  // ---- expressions ----

  CallArgs arguments(const Expr& expr, std::size_t first_operand, const Frame& frame) {
    CallArgs args;
    for (std::size_t i = first_operand; i < expr.operands.size(); ++i) args.positional.push_back(evaluate(*expr.operands[i], frame));
    for (const auto& [keyword, value] : expr.keywords) args.keywords.emplace_back(keyword, evaluate(*value, frame));
    return args;
  }

  Value evaluate(const Expr& expr, const Frame& frame) {
    try {
      DepthGuard guard(depth_);
      return evaluate_unguarded(expr, frame);
    } catch (const Failure&) {
      rethrow_at(expr.line);
    }
  }

  Value evaluate_unguarded(const Expr& expr, const Frame& frame) {
    switch (expr.kind) {
      case Expr::Kind::Literal: return expr.value;
      case Expr::Kind::Name: {
        const Value* found = frame.find(expr.name);
        return found ? *found : Value::undefined("'" + expr.name + "' is undefined");
      }
      case Expr::Kind::List:
      case Expr::Kind::Tuple: {
        std::vector<Value> items;
        for (const ExprPtr& operand : expr.operands) items.push_back(evaluate(*operand, frame));
        budget_.spend_list(items.size());
        return Value::list(std::move(items), expr.kind == Expr::Kind::Tuple);
      }
      case Expr::Kind::Dict: {
        std::vector<std::pair<std::string, Value>> entries;
        for (std::size_t i = 0; i + 1 < expr.operands.size(); i += 2) {
          const Value key = evaluate(*expr.operands[i], frame);
          if (!key.is_string()) throw Failure("dict keys other than strings are not supported");
          Value value = evaluate(*expr.operands[i + 1], frame);
          bool replaced = false;
          for (auto& entry : entries)
            if (entry.first == key.as_string()) {
              entry.second = value;
              replaced = true;
            }
          if (!replaced) entries.emplace_back(key.as_string(), std::move(value));
        }
        budget_.spend_list(entries.size());
        return Value::dict(std::move(entries));
      }
      case Expr::Kind::Attribute: return attribute(evaluate(*expr.operands[0], frame), expr.name, budget_);
      case Expr::Kind::Subscript:
        return item(evaluate(*expr.operands[0], frame), evaluate(*expr.operands[1], frame), budget_);
      case Expr::Kind::Slice: {
        const Value object = evaluate(*expr.operands[0], frame);
        Value bounds[3];
        for (int i = 0; i < 3; ++i)
          if (expr.operands[static_cast<std::size_t>(i) + 1]) bounds[i] = evaluate(*expr.operands[static_cast<std::size_t>(i) + 1], frame);
          else bounds[i] = Value::none();
        return slice(object, bounds[0], bounds[1], bounds[2], budget_);
      }
      case Expr::Kind::Call: {
        const Value callee = evaluate(*expr.operands[0], frame);
        const CallArgs args = arguments(expr, 1, frame);
        if (callee.is_undefined()) fail_undefined(callee);
        if (!callee.is_callable()) throw Failure("'" + callee.type_name() + "' object is not callable");
        return callee.as_callable().call(args);
      }
      case Expr::Kind::Filter: {
        const Value operand = evaluate(*expr.operands[0], frame);
        spend_scan(operand);
        return apply_filter(expr.name, operand, arguments(expr, 1, frame), budget_);
      }
      case Expr::Kind::Test: {
        const Value operand = evaluate(*expr.operands[0], frame);
        spend_scan(operand);
        const bool passed = apply_test(expr.name, operand, arguments(expr, 1, frame));
        return Value::boolean(passed != expr.negated);
      }
      case Expr::Kind::Not: return Value::boolean(!evaluate(*expr.operands[0], frame).truthy());
      case Expr::Kind::Negate: return negate(evaluate(*expr.operands[0], frame));
      case Expr::Kind::Plus: {
        Value operand = evaluate(*expr.operands[0], frame);
        if (operand.is_undefined()) fail_undefined(operand);
        if (!operand.is_number()) throw Failure("bad operand type for unary +: '" + operand.type_name() + "'");
        return operand.kind() == Value::Kind::Boolean ? Value::integer(operand.as_integer()) : operand;
      }
      case Expr::Kind::Binary: {
        Value left = evaluate(*expr.operands[0], frame);
        if (expr.name == "and") return left.truthy() ? evaluate(*expr.operands[1], frame) : left;
        if (expr.name == "or") return left.truthy() ? left : evaluate(*expr.operands[1], frame);
        return binary_operation(expr.name, left, evaluate(*expr.operands[1], frame), budget_);
      }
      case Expr::Kind::Compare: {
        Value left = evaluate(*expr.operands[0], frame);
        for (std::size_t i = 0; i < expr.ops.size(); ++i) {
          Value right = evaluate(*expr.operands[i + 1], frame);
          spend_scan(left);
          spend_scan(right);
          if (!compare(expr.ops[i], left, right)) return Value::boolean(false);
          left = std::move(right);
        }
        return Value::boolean(true);
      }
      case Expr::Kind::Conditional:
        if (evaluate(*expr.operands[0], frame).truthy()) return evaluate(*expr.operands[1], frame);
        if (expr.operands[2]) return evaluate(*expr.operands[2], frame);
        return Value::undefined("the inline if-expression on line " + std::to_string(expr.line) +
                                " evaluated to false and no else section was defined.");
    }
    throw Failure("unknown expression");
  }

  // Filters, tests and comparisons read a string whole: charged as work.
  void spend_scan(const Value& value) {
    if (value.is_string()) budget_.spend_scan(value.as_string().size());
  }

  static bool compare(const std::string& op, const Value& left, const Value& right) {
    if (op == "==") return equals(left, right);
    if (op == "!=") return !equals(left, right);
    if (op == "in") return contains(right, left);
    if (op == "not in") return !contains(right, left);
    if (left.is_undefined()) fail_undefined(left);
    if (right.is_undefined()) fail_undefined(right);
    if (op == "<") return less_than(left, right);
    if (op == ">") return less_than(right, left);
    if (op == "<=") return less_than(left, right) || equals(left, right);
    return less_than(right, left) || equals(left, right);  // ">="
  }

  const std::string& name_;
  Budget budget_;
  Frame globals_;
  const Frame* top_ = nullptr;
  std::string* output_ = nullptr;
  int depth_ = 0;
  int macro_depth_ = 0;
};

}  // namespace

Template::Template(std::string_view source, std::string name) : name_(std::move(name)) {
  body_ = std::make_shared<const Body>(parse_template(tokenize(source, name_, LexerOptions{}), name_));
}

std::string Template::render(const nlohmann::ordered_json& variables, const RenderLimits& limits) const {
  return Evaluator(name_, limits).run(*body_, variables);
}

}  // namespace tg::tokenizer::jinja
