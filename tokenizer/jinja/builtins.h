// The library a template can use, beside the evaluator: operators, attribute
// and item access, methods of str and dict, filters, tests, and JSON output.
// Each follows what jinja2 (run by Python) does, since the output must match
// it byte for byte; each file names the jinja2 or Python function it mirrors.
//
// They throw Failure (value.h) without a line; the evaluator adds it.
#pragma once

#include <string>
#include <vector>

#include "tinygpt/tokenizer/jinja/limits.h"
#include "tinygpt/tokenizer/jinja/value.h"

namespace tg::tokenizer::jinja {

// operators.cpp: Python's + - * / // % ** on numbers, strings and lists;
// ~ (concatenation as strings); unary minus; `in`.
Value binary_operation(const std::string& op, const Value& left, const Value& right, Budget& budget);
Value negate(const Value& operand);
bool contains(const Value& container, const Value& item);

// access.cpp: jinja2's getattr (obj.name: a method, else a dict key) and
// getitem (obj[key]: a key or index, else an attribute); slicing with Python's
// rules; the items a for loop visits.
Value attribute(const Value& object, const std::string& name, Budget& budget);
Value item(const Value& object, const Value& key, Budget& budget);
Value slice(const Value& object, const Value& start, const Value& stop, const Value& step, Budget& budget);
// Strings and dicts spend one list item per character or key.
std::vector<Value> iterate(const Value& value, Budget& budget);
// The number of Unicode characters of a UTF-8 string (Python's len(str)).
std::size_t character_count(const std::string& text);
// The UTF-8 string split into one string per character (one list item each
// spent: a string of ten million characters is not split).
std::vector<std::string> characters(const std::string& text, Budget& budget);

// methods.cpp: the bound method `name` of a str, dict or list (undefined when
// Python has no such method; a Failure when it has one we do not support).
Value method(const Value& object, const std::string& name, Budget& budget);

// filters.cpp: `value | name(args)`.
Value apply_filter(const std::string& name, const Value& value, const CallArgs& args, Budget& budget);

// tests.cpp: `value is name(args)`.
bool apply_test(const std::string& name, const Value& value, const CallArgs& args);

// json_text.cpp: Python's json.dumps(value, ensure_ascii, indent, separators,
// sort_keys), which Hugging Face's `tojson` filter calls with ensure_ascii=False.
struct JsonFormat {
  bool ensure_ascii = false;
  bool has_indent = false;
  std::string indent;  // the text of one level
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
std::string json_text(const Value& value, const JsonFormat& format, Budget& budget);

// text_case.cpp: Python's str.upper(), lower(), title() and capitalize(),
// for ASCII, Latin-1, Latin Extended-A, Greek and Cyrillic.
std::string upper_case(const std::string& text);
std::string lower_case(const std::string& text);
std::string title_case(const std::string& text);
std::string capitalized(const std::string& text);
// Python's str.isspace() for one character.
bool is_python_space(char32_t code_point);
// Python's str.strip/lstrip/rstrip: `chars` null strips whitespace.
std::string strip(const std::string& text, const std::string* chars, bool left, bool right);

// globals.cpp: range, namespace, dict and raise_exception, by name.
std::vector<std::pair<std::string, Value>> global_functions(Budget& budget);

// What raise_exception(message) throws, on its way to a TemplateRaisedError.
class RaisedFailure : public Failure {
 public:
  using Failure::Failure;
};

// Raises the Failure of using an undefined value (jinja2's UndefinedError).
[[noreturn]] void fail_undefined(const Value& undefined);

}  // namespace tg::tokenizer::jinja
