// Jinja's tests, `value is name(args)`, as jinja2/tests.py defines them.
// Python's types decide, as there: True is a number (bool is an int) but not
// an integer; an undefined value is iterable (and empty) and a sequence.
#include "tinygpt/tokenizer/jinja/builtins.h"

namespace tg::tokenizer::jinja {

namespace {

const Value& argument(const CallArgs& args, const std::string& test) {
  if (args.positional.empty()) throw Failure("the test '" + test + "' needs an argument");
  return args.positional[0];
}

// Python's value % divisor == expected, as jinja2's odd, even and divisibleby
// compute it (so 5.0 is odd, and True is odd).
bool remainder_is(const Value& value, const Value& divisor, int64_t expected, const std::string& test) {
  if (value.is_undefined()) fail_undefined(value);
  if (!value.is_number() || !divisor.is_number())
    throw Failure("the test '" + test + "' needs numbers, not " + value.type_name() + " and " + divisor.type_name());
  const RenderLimits limits;
  Budget numbers_only(limits);  // % on two numbers builds nothing
  return equals(binary_operation("%", value, divisor, numbers_only), Value::integer(expected));
}

}  // namespace

bool apply_test(const std::string& name, const Value& value, const CallArgs& args) {
  using Kind = Value::Kind;
  if (name == "defined") return !value.is_undefined();
  if (name == "undefined") return value.is_undefined();
  if (name == "none") return value.is_none();
  if (name == "boolean") return value.kind() == Kind::Boolean;
  if (name == "true") return value.kind() == Kind::Boolean && value.as_bool();
  if (name == "false") return value.kind() == Kind::Boolean && !value.as_bool();
  if (name == "integer") return value.kind() == Kind::Integer;
  if (name == "float") return value.kind() == Kind::Float;
  if (name == "number") return value.is_number();
  if (name == "string") return value.is_string();
  if (name == "mapping") return value.is_dict();
  if (name == "iterable") return value.is_undefined() || value.is_string() || value.is_list() || value.is_dict();
  if (name == "sequence")
    return value.is_undefined() || value.is_string() || (value.is_list() && !value.as_list().is_generator) ||
           value.is_dict();
  if (name == "callable") return value.is_callable();
  if (name == "odd") return remainder_is(value, Value::integer(2), 1, name);
  if (name == "even") return remainder_is(value, Value::integer(2), 0, name);
  if (name == "divisibleby") return remainder_is(value, argument(args, name), 0, name);
  if (name == "eq" || name == "equalto" || name == "==") return equals(value, argument(args, name));
  if (name == "ne" || name == "!=") return !equals(value, argument(args, name));
  if (name == "lt" || name == "lessthan" || name == "<") return less_than(value, argument(args, name));
  if (name == "gt" || name == "greaterthan" || name == ">") return less_than(argument(args, name), value);
  if (name == "le" || name == "<=") return !less_than(argument(args, name), value);
  if (name == "ge" || name == ">=") return !less_than(value, argument(args, name));
  if (name == "in") return contains(argument(args, name), value);
  if (name == "sameas") {
    const Value& other = argument(args, name);
    if (value.kind() != other.kind()) return false;
    if (value.is_none() || value.is_undefined()) return value.is_none();
    if (value.kind() == Kind::Boolean) return value.as_bool() == other.as_bool();
    return false;  // `is` on other values compares Python object identity, which we do not model
  }
  if (name == "lower" || name == "upper") {
    const std::string text = to_text(value);
    bool cased = false;
    for (const char c : text) {
      if (c >= 'a' && c <= 'z') {
        if (name == "upper") return false;
        cased = true;
      } else if (c >= 'A' && c <= 'Z') {
        if (name == "lower") return false;
        cased = true;
      }
    }
    return cased;
  }
  throw Failure("the test '" + name + "' is not supported");
}

}  // namespace tg::tokenizer::jinja
