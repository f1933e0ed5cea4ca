// Python's arithmetic and `in`, as jinja2 evaluates them: / is true division,
// // and % floor towards minus infinity (7 // -2 == -4, -7 % 3 == 2), + joins
// strings and lists, * repeats them, and ~ joins anything as strings.
// Python's integers are unbounded; ours are 64-bit, and overflow is an error.
#include <cmath>

#include "tinygpt/tokenizer/jinja/builtins.h"

namespace tg::tokenizer::jinja {

namespace {

[[noreturn]] void unsupported(const std::string& op, const Value& left, const Value& right) {
  throw Failure("unsupported operand type(s) for " + op + ": '" + left.type_name() + "' and '" + right.type_name() + "'");
}

[[noreturn]] void overflow() { throw Failure("integer overflow (tinygpt's template integers are 64-bit)"); }

Value repeat(const Value& sequence, int64_t times, Budget& budget) {
  if (times < 0) times = 0;
  if (sequence.is_string()) {
    const std::string& text = sequence.as_string();
    if (!text.empty() && static_cast<uint64_t>(times) > budget.limits().max_output_bytes / text.size() + 1)
      budget.spend_string(budget.limits().max_output_bytes + 1);
    budget.spend_string(text.size() * static_cast<std::size_t>(times));
    std::string out;
    out.reserve(text.size() * static_cast<std::size_t>(times));
    for (int64_t i = 0; i < times; ++i) out += text;
    return Value::string(std::move(out));
  }
  const auto& items = sequence.as_list().items;
  if (!items.empty() && static_cast<uint64_t>(times) > budget.limits().max_list_items / items.size() + 1)
    budget.spend_list(budget.limits().max_list_items + 1);
  budget.spend_list(items.size() * static_cast<std::size_t>(times));
  std::vector<Value> out;
  for (int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out), sequence.as_list().is_tuple);
}

double python_float_mod(double a, double b) {
  double remainder = std::fmod(a, b);
  if (remainder != 0.0 && ((b < 0) != (remainder < 0))) remainder += b;
  if (remainder == 0.0) remainder = std::copysign(0.0, b);
  return remainder;
}

// CPython's float_floor_div: exact where floor(a / b) would round wrongly.
double python_float_floor_division(double a, double b) {
  double remainder = std::fmod(a, b);
  double quotient = (a - remainder) / b;
  if (remainder != 0.0 && ((b < 0) != (remainder < 0))) quotient -= 1.0;
  if (quotient == 0.0) return std::copysign(0.0, a / b);
  double floored = std::floor(quotient);
  if (quotient - floored > 0.5) floored += 1.0;
  return floored;
}

Value arithmetic(const std::string& op, const Value& left, const Value& right) {
  if (left.is_integral() && right.is_integral()) {
    const int64_t a = left.as_integer();
    const int64_t b = right.as_integer();
    int64_t result = 0;
    if (op == "+" || op == "-" || op == "*") {
      const bool overflowed = op == "+"   ? __builtin_add_overflow(a, b, &result)
                              : op == "-" ? __builtin_sub_overflow(a, b, &result)
                                          : __builtin_mul_overflow(a, b, &result);
      if (overflowed) overflow();
      return Value::integer(result);
    }
    if (op == "/") {
      if (b == 0) throw Failure("division by zero");
      return Value::floating(static_cast<double>(a) / static_cast<double>(b));
    }
    if (op == "//" || op == "%") {
      if (b == 0) throw Failure(op == "%" ? "integer modulo by zero" : "integer division or modulo by zero");
      if (a == INT64_MIN && b == -1) overflow();
      int64_t quotient = a / b;
      int64_t remainder = a % b;
      if (remainder != 0 && ((remainder < 0) != (b < 0))) {
        --quotient;
        remainder += b;
      }
      return Value::integer(op == "//" ? quotient : remainder);
    }
    if (op == "**") {
      if (a == 0 && b < 0) throw Failure("0.0 cannot be raised to a negative power");
      if (b < 0) return Value::floating(std::pow(static_cast<double>(a), static_cast<double>(b)));
      int64_t power = 1;
      for (int64_t i = 0; i < b; ++i) {
        if (__builtin_mul_overflow(power, a, &power)) overflow();
        if (power == 0 || power == 1) break;
        if (power == -1) {
          power = (b - i - 1) % 2 == 0 ? -1 : 1;
          break;
        }
      }
      return Value::integer(power);
    }
  }
  const double a = left.as_double();
  const double b = right.as_double();
  if (op == "+") return Value::floating(a + b);
  if (op == "-") return Value::floating(a - b);
  if (op == "*") return Value::floating(a * b);
  if (op == "/") {
    if (b == 0.0) throw Failure("float division by zero");
    return Value::floating(a / b);
  }
  if (op == "//") {
    if (b == 0.0) throw Failure("float floor division by zero");
    return Value::floating(python_float_floor_division(a, b));
  }
  if (op == "%") {
    if (b == 0.0) throw Failure("float modulo");
    return Value::floating(python_float_mod(a, b));
  }
  if (op == "**") {
    if (a == 0.0 && b < 0) throw Failure("0.0 cannot be raised to a negative power");
    if (a < 0 && b != std::floor(b)) throw Failure("a negative number to a fractional power is complex: not supported");
    return Value::floating(std::pow(a, b));
  }
  unsupported(op, left, right);
}

}  // namespace

Value binary_operation(const std::string& op, const Value& left, const Value& right, Budget& budget) {
  if (op == "~") {
    std::string text = to_text(left);
    const std::string right_text = to_text(right);
    budget.spend_string(text.size() + right_text.size());
    return Value::string(text + right_text);
  }
  if (left.is_undefined()) fail_undefined(left);
  if (right.is_undefined()) fail_undefined(right);
  if (left.is_number() && right.is_number()) return arithmetic(op, left, right);
  if (op == "+" && left.is_string() && right.is_string()) {
    budget.spend_string(left.as_string().size() + right.as_string().size());
    return Value::string(left.as_string() + right.as_string());
  }
  if (op == "+" && left.is_list() && right.is_list() && !left.as_list().is_generator && !right.as_list().is_generator &&
      left.as_list().is_tuple == right.as_list().is_tuple) {
    budget.spend_list(left.as_list().items.size() + right.as_list().items.size());
    std::vector<Value> items = left.as_list().items;
    items.insert(items.end(), right.as_list().items.begin(), right.as_list().items.end());
    return Value::list(std::move(items), left.as_list().is_tuple);
  }
  if (op == "*") {
    const bool left_sequence = left.is_string() || (left.is_list() && !left.as_list().is_generator);
    const bool right_sequence = right.is_string() || (right.is_list() && !right.as_list().is_generator);
    if (left_sequence && right.is_integral()) return repeat(left, right.as_integer(), budget);
    if (right_sequence && left.is_integral()) return repeat(right, left.as_integer(), budget);
  }
  if (op == "%" && left.is_string()) throw Failure("string formatting with '%' is not supported");
  if (op == "+" && (left.is_string() || (left.is_list() && !left.as_list().is_generator)))  // Python's words
    throw Failure("can only concatenate " + left.type_name() + " (not \"" + right.type_name() + "\") to " +
                  left.type_name());
  unsupported(op, left, right);
}

Value negate(const Value& operand) {
  if (operand.is_undefined()) fail_undefined(operand);
  if (operand.is_integral()) {
    if (operand.as_integer() == INT64_MIN) overflow();
    return Value::integer(-operand.as_integer());
  }
  if (operand.kind() == Value::Kind::Float) return Value::floating(-operand.as_double());
  throw Failure("bad operand type for unary -: '" + operand.type_name() + "'");
}

bool contains(const Value& container, const Value& needle) {
  switch (container.kind()) {
    case Value::Kind::Undefined: return false;
    case Value::Kind::String:
      if (!needle.is_string())
        throw Failure("'in <string>' requires string as left operand, not " + needle.type_name());
      return container.as_string().find(needle.as_string()) != std::string::npos;
    case Value::Kind::List:
      for (const Value& element : container.as_list().items)
        if (equals(element, needle)) return true;
      return false;
    case Value::Kind::Dict:
      if (needle.is_list() || needle.is_dict() || needle.is_namespace())
        throw Failure("unhashable type: '" + needle.type_name() + "'");
      return needle.is_string() && container.as_dict().find(needle.as_string()) != nullptr;
    default: throw Failure("argument of type '" + container.type_name() + "' is not iterable");
  }
}

}  // namespace tg::tokenizer::jinja
