// Values of the Jinja interpreter: construction, Python's str(), repr(), ==
// and <. See value.h.
#include "tinygpt/tokenizer/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace tg::tokenizer::jinja {

namespace {

// One more than the deepest of `values` (each read through `value_of`);
// refused past kMaxValueNesting.
template <class Range, class ValueOf>
int nesting_above(const Range& values, ValueOf value_of) {
  int deepest = 0;
  for (const auto& element : values) deepest = std::max(deepest, value_of(element).nesting());
  if (deepest + 1 > kMaxValueNesting)
    throw Failure("lists and dicts nest deeper than " + std::to_string(kMaxValueNesting) + " levels");
  return deepest + 1;
}

int nesting_of(const std::vector<Value>& items) {
  return nesting_above(items, [](const Value& v) -> const Value& { return v; });
}

int nesting_of(const std::vector<std::pair<std::string, Value>>& entries) {
  return nesting_above(entries, [](const auto& entry) -> const Value& { return entry.second; });
}

}  // namespace

Value Value::undefined(std::string why) {
  Value value;
  value.string_ = std::make_shared<const std::string>(std::move(why));
  return value;
}

Value Value::none() {
  Value value;
  value.kind_ = Kind::None;
  return value;
}

Value Value::boolean(bool b) {
  Value value;
  value.kind_ = Kind::Boolean;
  value.boolean_ = b;
  return value;
}

Value Value::integer(int64_t i) {
  Value value;
  value.kind_ = Kind::Integer;
  value.integer_ = i;
  return value;
}

Value Value::floating(double d) {
  Value value;
  value.kind_ = Kind::Float;
  value.float_ = d;
  return value;
}

Value Value::string(std::string s) {
  Value value;
  value.kind_ = Kind::String;
  value.string_ = std::make_shared<const std::string>(std::move(s));
  return value;
}

Value Value::list(std::vector<Value> items, bool is_tuple) {
  Value value;
  value.kind_ = Kind::List;
  const int nesting = nesting_of(items);
  value.list_ = std::make_shared<const List>(List{std::move(items), is_tuple, false, nesting});
  return value;
}

Value Value::generator(std::vector<Value> items) {
  Value value;
  value.kind_ = Kind::List;
  const int nesting = nesting_of(items);
  value.list_ = std::make_shared<const List>(List{std::move(items), false, true, nesting});
  return value;
}

Value Value::dict(std::vector<std::pair<std::string, Value>> entries) {
  Value value;
  value.kind_ = Kind::Dict;
  const int nesting = nesting_of(entries);
  value.dict_ = std::make_shared<Dict>(Dict{std::move(entries), nesting});
  return value;
}

Value Value::namespace_(std::vector<std::pair<std::string, Value>> entries) {
  Value value = dict(std::move(entries));
  value.kind_ = Kind::Namespace;
  return value;
}

Value Value::callable(std::string name, std::function<Value(const CallArgs&)> call) {
  Value value;
  value.kind_ = Kind::Callable;
  value.callable_ = std::make_shared<const Callable>(Callable{std::move(name), std::move(call)});
  return value;
}

Value Value::from_json(const nlohmann::ordered_json& json, int depth) {
  if (depth > kMaxValueNesting)
    throw Failure("JSON input nests deeper than " + std::to_string(kMaxValueNesting) + " levels");
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null: return none();
    case nlohmann::ordered_json::value_t::boolean: return boolean(json.get<bool>());
    case nlohmann::ordered_json::value_t::number_integer: return integer(json.get<int64_t>());
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const uint64_t number = json.get<uint64_t>();
      if (number > static_cast<uint64_t>(INT64_MAX))
        throw Failure("the JSON integer " + std::to_string(number) + " does not fit in 64 bits");
      return integer(static_cast<int64_t>(number));
    }
    case nlohmann::ordered_json::value_t::number_float: return floating(json.get<double>());
    case nlohmann::ordered_json::value_t::string: return string(json.get<std::string>());
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json(item, depth + 1));
      return list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      std::vector<std::pair<std::string, Value>> entries;
      for (const auto& member : json.items()) {
        const std::string& key = member.key();  // a plain name: clang 14 lambdas cannot capture bindings
        Value converted = from_json(member.value(), depth + 1);
        auto existing = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return e.first == key; });
        if (existing != entries.end()) existing->second = std::move(converted);  // the last one wins, as in Python
        else entries.emplace_back(key, std::move(converted));
      }
      return dict(std::move(entries));
    }
    default: throw Failure("JSON binary values are not supported");
  }
}

int64_t Value::as_integer() const { return kind_ == Kind::Boolean ? (boolean_ ? 1 : 0) : integer_; }

double Value::as_double() const { return kind_ == Kind::Float ? float_ : static_cast<double>(as_integer()); }

const std::string& Value::undefined_reason() const {
  static const std::string unknown = "a value is undefined";
  return string_ && !string_->empty() ? *string_ : unknown;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Boolean: return boolean_;
    case Kind::Integer: return integer_ != 0;
    case Kind::Float: return float_ != 0.0;
    case Kind::String: return !string_->empty();
    case Kind::List: return list_->is_generator || !list_->items.empty();
    case Kind::Dict: return !dict_->entries.empty();
    case Kind::Namespace:
    case Kind::Callable: return true;
  }
  return false;
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "Undefined";
    case Kind::None: return "NoneType";
    case Kind::Boolean: return "bool";
    case Kind::Integer: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return list_->is_generator ? "generator" : list_->is_tuple ? "tuple" : "list";
    case Kind::Dict: return "dict";
    case Kind::Namespace: return "Namespace";
    case Kind::Callable: return "function";
  }
  return "object";
}

int Value::nesting() const {
  if (kind_ == Kind::List) return list_->nesting;
  if (kind_ == Kind::Dict || kind_ == Kind::Namespace) return dict_->nesting;
  return 0;
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& entry : entries)
    if (entry.first == key) return &entry.second;
  return nullptr;
}

void Dict::set(const std::string& key, Value value) {
  nesting = std::max(nesting, value.nesting() + 1);
  if (nesting > kMaxValueNesting)
    throw Failure("lists and dicts nest deeper than " + std::to_string(kMaxValueNesting) + " levels");
  for (auto& entry : entries)
    if (entry.first == key) {
      entry.second = std::move(value);
      return;
    }
  entries.emplace_back(key, std::move(value));
}

const Value* CallArgs::get(std::size_t position, std::string_view name) const {
  for (const auto& keyword : keywords)
    if (keyword.first == name) return &keyword.second;
  return position < positional.size() ? &positional[position] : nullptr;
}

std::string float_text(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  // The shortest round-trip digits in scientific form, "d.ddde+XX", then
  // Python's layout: fixed notation for exponents -4..15, else scientific.
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value, std::chars_format::scientific);
  const std::string scientific(buffer, result.ptr);
  const std::size_t e = scientific.find('e');
  std::string mantissa = scientific.substr(0, e);
  const int exponent = std::stoi(scientific.substr(e + 1));
  std::string sign;
  if (mantissa[0] == '-') {
    sign = "-";
    mantissa.erase(0, 1);
  }
  std::string digits = mantissa;
  digits.erase(std::remove(digits.begin(), digits.end(), '.'), digits.end());
  if (exponent >= -4 && exponent < 16) {
    std::string text;
    if (exponent < 0) {
      text = "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
    } else {
      const std::size_t integer_digits = static_cast<std::size_t>(exponent) + 1;
      if (digits.size() <= integer_digits) text = digits + std::string(integer_digits - digits.size(), '0') + ".0";
      else text = digits.substr(0, integer_digits) + "." + digits.substr(integer_digits);
    }
    return sign + text;
  }
  char exponent_text[16];
  std::snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
  return sign + mantissa + exponent_text;
}

namespace {

std::string string_repr(const std::string& text) {
  const bool has_single = text.find('\'') != std::string::npos;
  const bool has_double = text.find('"') != std::string::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == quote || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      char hex[8];
      std::snprintf(hex, sizeof hex, "\\x%02x", byte);
      out += hex;
    } else {
      out += c;
    }
  }
  out += quote;
  return out;
}

}  // namespace

std::string to_repr(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined: return "Undefined";
    case Value::Kind::String: return string_repr(value.as_string());
    case Value::Kind::List: {
      const List& list = value.as_list();
      if (list.is_generator)
        throw Failure("printing a generator (what select, map and reverse return) is not supported: "
                      "jinja2 prints its memory address; add |list");
      std::string out = list.is_tuple ? "(" : "[";
      for (std::size_t i = 0; i < list.items.size(); ++i) out += (i ? ", " : "") + to_repr(list.items[i]);
      if (list.is_tuple && list.items.size() == 1) out += ",";
      return out + (list.is_tuple ? ")" : "]");
    }
    case Value::Kind::Dict:
    case Value::Kind::Namespace: {
      std::string out = value.is_namespace() ? "<Namespace {" : "{";
      bool first = true;
      for (const auto& [key, item] : value.as_dict().entries) {
        out += (first ? "" : ", ") + string_repr(key) + ": " + to_repr(item);
        first = false;
      }
      return out + (value.is_namespace() ? "}>" : "}");
    }
    case Value::Kind::Callable: return "<function " + value.as_callable().name + ">";
    default: return to_text(value);
  }
}

std::string to_text(const Value& value) {
  switch (value.kind()) {
    case Value::Kind::Undefined: return "";
    case Value::Kind::None: return "None";
    case Value::Kind::Boolean: return value.as_bool() ? "True" : "False";
    case Value::Kind::Integer: return std::to_string(value.as_integer());
    case Value::Kind::Float: return float_text(value.as_double());
    case Value::Kind::String: return value.as_string();
    default: return to_repr(value);
  }
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_integer() == b.as_integer();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.as_string() == b.as_string();
    case Value::Kind::List: {
      const auto& x = a.as_list().items;
      const auto& y = b.as_list().items;
      if (a.as_list().is_tuple != b.as_list().is_tuple || x.size() != y.size()) return false;
      for (std::size_t i = 0; i < x.size(); ++i)
        if (!equals(x[i], y[i])) return false;
      return true;
    }
    case Value::Kind::Dict: {
      const auto& x = a.as_dict().entries;
      if (x.size() != b.as_dict().entries.size()) return false;
      for (const auto& [key, item] : x) {
        const Value* other = b.as_dict().find(key);
        if (!other || !equals(item, *other)) return false;
      }
      return true;
    }
    case Value::Kind::Namespace: return &a.as_dict() == &b.as_dict();
    case Value::Kind::Callable: return &a.as_callable() == &b.as_callable();
    default: return false;
  }
}

bool less_than(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.is_integral() && b.is_integral()) return a.as_integer() < b.as_integer();
    return a.as_double() < b.as_double();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();  // UTF-8 bytes sort as code points
  if (a.is_list() && b.is_list() && a.as_list().is_tuple == b.as_list().is_tuple) {
    const auto& x = a.as_list().items;
    const auto& y = b.as_list().items;
    for (std::size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (!equals(x[i], y[i])) return less_than(x[i], y[i]);
    }
    return x.size() < y.size();
  }
  throw Failure("'<' not supported between instances of '" + a.type_name() + "' and '" + b.type_name() + "'");
}

}  // namespace tg::tokenizer::jinja
