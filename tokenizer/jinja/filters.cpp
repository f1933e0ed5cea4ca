// Jinja's filters, `value | name(args)`, as jinja2/filters.py defines them
// (and `tojson` as Hugging Face replaces it). Most convert their input with
// str() first, so `none | upper` is "NONE" and `undefined | trim` is "".
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer::jinja {

namespace {

const Value* argument(const CallArgs& args, std::size_t position, const char* name) { return args.get(position, name); }

// jinja2's make_attrgetter: "a.b.0" looks up a, then b, then item 0.
Value lookup_path(const Value& value, const std::string& path, Budget& budget) {
  Value current = value;
  std::size_t start = 0;
  while (true) {
    const std::size_t dot = path.find('.', start);
    const std::string part = path.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    current = item(current, digits ? Value::integer(std::stoll(part)) : Value::string(part), budget);
    if (dot == std::string::npos) return current;
    start = dot + 1;
  }
}

std::string attribute_path(const Value* attribute) {
  if (!attribute) throw Failure("missing the attribute to look up");
  if (attribute->is_integral()) return std::to_string(attribute->as_integer());
  if (!attribute->is_string()) throw Failure("the attribute must be a string");
  return attribute->as_string();
}

// selectattr, rejectattr, select, reject (jinja2's _select_or_reject).
Value select_or_reject(const Value& sequence, const CallArgs& args, bool by_attribute, bool select, Budget& budget) {
  std::size_t next = 0;
  std::string path;
  if (by_attribute) path = attribute_path(argument(args, next++, "attribute"));
  std::string test;
  if (next < args.positional.size()) {
    const Value& name = args.positional[next++];
    if (!name.is_string()) throw Failure("the test name must be a string");
    test = name.as_string();
  }
  CallArgs test_args;
  test_args.positional.assign(args.positional.begin() + static_cast<std::ptrdiff_t>(std::min(next, args.positional.size())),
                              args.positional.end());
  std::vector<Value> kept;
  if (!sequence.truthy()) return Value::generator({});  // jinja2 yields nothing for a false value, iterable or not
  for (const Value& element : iterate(sequence, budget)) {
    const Value subject = by_attribute ? lookup_path(element, path, budget) : element;
    const bool passes = test.empty() ? subject.truthy() : apply_test(test, subject, test_args);
    if (passes == select) kept.push_back(element);
  }
  budget.spend_list(kept.size());
  return Value::generator(std::move(kept));
}

Value map_filter(const Value& sequence, const CallArgs& args, Budget& budget) {
  std::vector<Value> mapped;
  if (!sequence.truthy()) return Value::generator({});  // as select: nothing for a false value
  const Value* attribute = nullptr;
  for (const auto& keyword : args.keywords)
    if (keyword.first == "attribute") attribute = &keyword.second;
  if (attribute) {
    const std::string path = attribute_path(attribute);
    const Value* otherwise = nullptr;
    for (const auto& keyword : args.keywords)
      if (keyword.first == "default") otherwise = &keyword.second;
    for (const Value& element : iterate(sequence, budget)) {
      Value found = lookup_path(element, path, budget);
      mapped.push_back(found.is_undefined() && otherwise ? *otherwise : found);
    }
  } else {
    if (args.positional.empty() || !args.positional[0].is_string()) throw Failure("map needs a filter name or attribute=");
    const std::string filter = args.positional[0].as_string();
    CallArgs filter_args;
    filter_args.positional.assign(args.positional.begin() + 1, args.positional.end());
    filter_args.keywords = args.keywords;
    for (const Value& element : iterate(sequence, budget)) mapped.push_back(apply_filter(filter, element, filter_args, budget));
  }
  budget.spend_list(mapped.size());
  return Value::generator(std::move(mapped));
}

// Hugging Face's tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False).
Value tojson_filter(const Value& value, const CallArgs& args, Budget& budget) {
  JsonFormat format;
  if (const Value* ensure_ascii = argument(args, 0, "ensure_ascii")) format.ensure_ascii = ensure_ascii->truthy();
  if (const Value* indent = argument(args, 1, "indent"); indent && !indent->is_none()) {
    format.has_indent = true;
    format.item_separator = ",";
    if (indent->is_string()) format.indent = indent->as_string();
    else if (indent->is_integral()) format.indent = std::string(static_cast<std::size_t>(std::max<int64_t>(0, std::min<int64_t>(indent->as_integer(), 1024))), ' ');
    else throw Failure("tojson's indent must be an integer or a string");
  }
  if (const Value* separators = argument(args, 2, "separators"); separators && !separators->is_none()) {
    if (!separators->is_list() || separators->as_list().items.size() != 2 || !separators->as_list().items[0].is_string() ||
        !separators->as_list().items[1].is_string())
      throw Failure("tojson's separators must be a pair of strings");
    format.item_separator = separators->as_list().items[0].as_string();
    format.key_separator = separators->as_list().items[1].as_string();
  }
  if (const Value* sort_keys = argument(args, 3, "sort_keys")) format.sort_keys = sort_keys->truthy();
  return Value::string(json_text(value, format, budget));
}

// Python's float(text) for the strings int and float filters read; nothing when it is not a number.
bool parse_python_float(const std::string& text, double& out) {
  const std::string trimmed = strip(text, nullptr, true, true);
  if (trimmed.empty()) return false;
  std::string cleaned;
  for (std::size_t i = 0; i < trimmed.size(); ++i) {
    if (trimmed[i] == '_') {
      if (i == 0 || i + 1 == trimmed.size() || !std::isdigit(static_cast<unsigned char>(trimmed[i - 1])) ||
          !std::isdigit(static_cast<unsigned char>(trimmed[i + 1])))
        return false;
      continue;
    }
    if (trimmed[i] == 'x' || trimmed[i] == 'X' || trimmed[i] == 'p' || trimmed[i] == 'P') return false;  // no hex floats
    cleaned += trimmed[i];
  }
  char* end = nullptr;
  out = std::strtod(cleaned.c_str(), &end);
  return end == cleaned.c_str() + cleaned.size();
}

bool parse_python_int(const std::string& text, int64_t& out) {
  const std::string trimmed = strip(text, nullptr, true, true);
  std::string digits;
  for (std::size_t i = 0; i < trimmed.size(); ++i) {
    const char c = trimmed[i];
    if (i == 0 && (c == '+' || c == '-')) {
      digits += c;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
    } else if (c == '_' && i > 0 && std::isdigit(static_cast<unsigned char>(trimmed[i - 1])) && i + 1 < trimmed.size() &&
               std::isdigit(static_cast<unsigned char>(trimmed[i + 1]))) {
    } else {
      return false;
    }
  }
  if (digits.empty() || digits == "+" || digits == "-") return false;
  errno = 0;
  out = std::strtoll(digits.c_str(), nullptr, 10);
  if (errno == ERANGE) throw Failure("the integer " + trimmed + " does not fit in 64 bits");
  return true;
}

Value float_to_int(double d) {
  if (std::isnan(d)) throw Failure("cannot convert float NaN to integer");
  if (std::isinf(d)) throw Failure("cannot convert float infinity to integer");
  if (std::fabs(d) >= 9.2e18) throw Failure("the number does not fit in a 64-bit integer");
  return Value::integer(static_cast<int64_t>(d));
}

Value int_filter(const Value& value, const CallArgs& args) {
  const Value* otherwise = argument(args, 0, "default");
  const Value fallback = otherwise ? *otherwise : Value::integer(0);
  if (const Value* base = argument(args, 1, "base"); base && !(base->is_integral() && base->as_integer() == 10))
    throw Failure("int's base other than 10 is not supported");
  if (value.is_undefined()) fail_undefined(value);
  if (value.is_integral()) return Value::integer(value.as_integer());
  if (value.kind() == Value::Kind::Float) return float_to_int(value.as_double());
  if (value.is_string()) {
    int64_t number = 0;
    if (parse_python_int(value.as_string(), number)) return Value::integer(number);
    double d = 0;
    if (parse_python_float(value.as_string(), d)) {
      if (std::isnan(d)) return fallback;
      return float_to_int(d);
    }
  }
  return fallback;
}

Value float_filter(const Value& value, const CallArgs& args) {
  const Value* otherwise = argument(args, 0, "default");
  const Value fallback = otherwise ? *otherwise : Value::floating(0.0);
  if (value.is_undefined()) fail_undefined(value);
  if (value.is_number()) return Value::floating(value.as_double());
  double d = 0;
  if (value.is_string() && parse_python_float(value.as_string(), d)) return Value::floating(d);
  return fallback;
}

// jinja2's do_title: each word (split at whitespace, - ( { [ <) gets its first
// character upper-cased and the rest lower-cased ("they're" stays "They're").
std::string jinja_title(const std::string& text, Budget& budget) {
  std::string out;
  bool word_start = true;
  for (const std::string& c : characters(text, budget)) {
    const bool separator = c == "-" || c == "(" || c == "{" || c == "[" || c == "<" ||
                           is_python_space(decode_utf8_char(c, 0).code_point);
    if (separator) {
      out += c;
      word_start = true;
    } else {
      out += word_start ? upper_case(c) : lower_case(c);
      word_start = false;
    }
  }
  return out;
}

// jinja2's do_indent(s, width=4, first=False, blank=False).
std::string indent_filter(const std::string& text, const CallArgs& args) {
  std::string indentation = "    ";
  if (const Value* width = argument(args, 0, "width")) {
    if (width->is_string()) indentation = width->as_string();
    else if (width->is_integral()) indentation = std::string(static_cast<std::size_t>(std::clamp<int64_t>(width->as_integer(), 0, 1024)), ' ');
    else throw Failure("indent's width must be an integer or a string");
  }
  const Value* first = argument(args, 1, "first");
  const Value* blank = argument(args, 2, "blank");
  // str.splitlines() on text + "\n", for the usual line breaks.
  std::vector<std::string> lines;
  std::string line;
  const std::string padded = text + "\n";
  for (std::size_t i = 0; i < padded.size(); ++i) {
    const char c = padded[i];
    if (c == '\n' || c == '\r' || c == '\v' || c == '\f' || c == '\x1c' || c == '\x1d' || c == '\x1e') {
      if (c == '\r' && i + 1 < padded.size() && padded[i + 1] == '\n') ++i;
      lines.push_back(line);
      line.clear();
    } else {
      line += c;
    }
  }
  if (!line.empty()) lines.push_back(line);
  std::string out;
  if (blank && blank->truthy()) {
    for (std::size_t i = 0; i < lines.size(); ++i) {
      if (i) {
        out += '\n';
        out += indentation;
      }
      out += lines[i];
    }
  } else {
    out = lines.empty() ? "" : lines[0];
    for (std::size_t i = 1; i < lines.size(); ++i) {
      out += '\n';
      if (!lines[i].empty()) out += indentation;
      out += lines[i];
    }
  }
  if (first && first->truthy()) out = indentation + out;
  return out;
}

Value first_or_last(const Value& value, bool first, Budget& budget) {
  std::vector<Value> items = iterate(value, budget);
  if (items.empty()) return Value::undefined(first ? "No first item, sequence was empty." : "No last item, sequence was empty.");
  return first ? items.front() : items.back();
}

}  // namespace

Value apply_filter(const std::string& name, const Value& value, const CallArgs& args, Budget& budget) {
  if (name == "tojson") return tojson_filter(value, args, budget);
  if (name == "trim") {
    const Value* chars = argument(args, 0, "chars");
    const bool has_chars = chars && chars->is_string();
    return Value::string(strip(to_text(value), has_chars ? &chars->as_string() : nullptr, true, true));
  }
  if (name == "length" || name == "count") {
    switch (value.kind()) {
      case Value::Kind::Undefined: return Value::integer(0);
      case Value::Kind::String: return Value::integer(static_cast<int64_t>(character_count(value.as_string())));
      case Value::Kind::List:
        if (value.as_list().is_generator) throw Failure("object of type 'generator' has no len()");
        return Value::integer(static_cast<int64_t>(value.as_list().items.size()));
      case Value::Kind::Dict: return Value::integer(static_cast<int64_t>(value.as_dict().entries.size()));
      default: throw Failure("object of type '" + value.type_name() + "' has no len()");
    }
  }
  if (name == "default" || name == "d") {
    const Value* otherwise = argument(args, 0, "default_value");
    const Value* boolean = argument(args, 1, "boolean");
    const bool use_default = value.is_undefined() || (boolean && boolean->truthy() && !value.truthy());
    return use_default ? (otherwise ? *otherwise : Value::string("")) : value;
  }
  if (name == "upper") return Value::string(upper_case(to_text(value)));
  if (name == "lower") return Value::string(lower_case(to_text(value)));
  if (name == "capitalize") return Value::string(capitalized(to_text(value)));
  if (name == "title") return Value::string(jinja_title(to_text(value), budget));
  if (name == "string") return Value::string(to_text(value));
  if (name == "safe") return value;
  if (name == "join") {
    const Value* separator = argument(args, 0, "d");
    const Value* attribute = argument(args, 1, "attribute");
    const std::string glue = separator ? to_text(*separator) : "";
    std::string out;
    bool first = true;
    for (const Value& element : iterate(value, budget)) {
      if (!first) out += glue;
      out += to_text(attribute ? lookup_path(element, attribute_path(attribute), budget) : element);
      first = false;
      budget.check_string(out.size());
    }
    budget.spend_string(out.size());
    return Value::string(std::move(out));
  }
  if (name == "list") {
    std::vector<Value> items = iterate(value, budget);
    budget.spend_list(items.size());
    return Value::list(std::move(items));
  }
  if (name == "first") return first_or_last(value, true, budget);
  if (name == "last") return first_or_last(value, false, budget);
  if (name == "selectattr" || name == "rejectattr") return select_or_reject(value, args, true, name == "selectattr", budget);
  if (name == "select" || name == "reject") return select_or_reject(value, args, false, name == "select", budget);
  if (name == "map") return map_filter(value, args, budget);
  if (name == "replace") {
    const Value* old = argument(args, 0, "old");
    const Value* replacement = argument(args, 1, "new");
    const Value* count = argument(args, 2, "count");
    if (!old || !replacement) throw Failure("replace needs the old and the new text");
    CallArgs method_args;
    method_args.positional = {Value::string(to_text(*old)), Value::string(to_text(*replacement))};
    if (count && !count->is_none()) method_args.positional.push_back(*count);
    return method(Value::string(to_text(value)), "replace", budget).as_callable().call(method_args);
  }
  if (name == "int") return int_filter(value, args);
  if (name == "float") return float_filter(value, args);
  if (name == "abs") {
    if (value.is_integral()) return value.as_integer() < 0 ? negate(value) : Value::integer(value.as_integer());
    if (value.kind() == Value::Kind::Float) return Value::floating(std::fabs(value.as_double()));
    throw Failure("bad operand type for abs(): '" + value.type_name() + "'");
  }
  if (name == "items") {
    if (value.is_undefined()) return Value::generator({});
    if (!value.is_dict()) throw Failure("Can only get item pairs from a mapping.");
    std::vector<Value> pairs;
    for (const auto& [key, element] : value.as_dict().entries) pairs.push_back(Value::list({Value::string(key), element}, true));
    budget.spend_list(pairs.size());
    return Value::generator(std::move(pairs));
  }
  if (name == "reverse") {
    if (value.is_string()) {
      std::vector<std::string> chars = characters(value.as_string(), budget);
      std::reverse(chars.begin(), chars.end());
      std::string out;
      for (const std::string& c : chars) out += c;
      return Value::string(std::move(out));
    }
    std::vector<Value> items = iterate(value, budget);
    std::reverse(items.begin(), items.end());
    return Value::generator(std::move(items));
  }
  if (name == "indent") return Value::string(indent_filter(to_text(value), args));
  throw Failure("the filter '" + name + "' is not supported");
}

}  // namespace tg::tokenizer::jinja
