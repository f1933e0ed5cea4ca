// The values a Jinja template computes with, modelled on the Python objects
// jinja2 hands around: undefined, None, bool, int, float, str, list (and
// tuple), dict, namespace() and callables (macros, bound methods, globals).
//
// Copies are cheap: strings, lists and dicts are shared and immutable (the
// template's inputs are never changed, as in Hugging Face's immutable
// sandbox); only a namespace is mutable, and shared on purpose, since
// `set ns.attr = ...` inside a loop must be seen after it.
//
// Python semantics matter because the output must be byte-identical to
// jinja2's: str(1.0) is "1.0", str(True) is "True", 7 // -2 is -4, a dict keeps
// its insertion order, and a missing key is "undefined" (prints as "",
// `is defined` is false) rather than an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace tg::tokenizer::jinja {

// Lists and dicts nested deeper than this are refused: printing and comparing
// them recurse once per level.
inline constexpr int kMaxValueNesting = 256;

// A failure while computing a value, without a line: the evaluator catches it
// at the expression that caused it and throws a TemplateError naming the line.
class Failure : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A failure jinja2 reports as UndefinedError: using an undefined value other
// than printing it, testing it or iterating over it.
class UndefinedFailure : public Failure {
 public:
  using Failure::Failure;
};

class Value;
struct List;
struct Dict;
struct Callable;
struct CallArgs;

using Undefined = std::monostate;
struct None {};

class Value {
 public:
  enum class Kind { Undefined, None, Boolean, Integer, Float, String, List, Dict, Namespace, Callable };

  Value() = default;  // undefined
  static Value undefined(std::string why);  // why: "'x' is undefined", for the error if it is used
  static Value none();
  static Value boolean(bool b);
  static Value integer(int64_t i);
  static Value floating(double d);
  static Value string(std::string s);
  static Value list(std::vector<Value> items, bool is_tuple = false);
  // What select, map and reverse return in jinja2: a Python generator.
  // It iterates like a list, but is always true, has no length and cannot be
  // printed (jinja2 would print its address).
  static Value generator(std::vector<Value> items);
  static Value dict(std::vector<std::pair<std::string, Value>> entries);
  static Value namespace_(std::vector<std::pair<std::string, Value>> entries);
  static Value callable(std::string name, std::function<Value(const CallArgs&)> call);
  // JSON null, booleans, numbers, strings, arrays and objects (keys keep their order).
  static Value from_json(const nlohmann::ordered_json& json, int depth = 0);

  Kind kind() const { return kind_; }
  bool is_undefined() const { return kind_ == Kind::Undefined; }
  bool is_none() const { return kind_ == Kind::None; }
  bool is_string() const { return kind_ == Kind::String; }
  bool is_list() const { return kind_ == Kind::List; }
  bool is_dict() const { return kind_ == Kind::Dict; }
  bool is_namespace() const { return kind_ == Kind::Namespace; }
  bool is_callable() const { return kind_ == Kind::Callable; }
  // bool, int or float: Python's numbers (bool is an int there).
  bool is_number() const { return kind_ == Kind::Boolean || kind_ == Kind::Integer || kind_ == Kind::Float; }
  bool is_integral() const { return kind_ == Kind::Boolean || kind_ == Kind::Integer; }

  bool as_bool() const { return boolean_; }
  int64_t as_integer() const;  // bool or int
  double as_double() const;    // bool, int or float
  const std::string& as_string() const { return *string_; }
  const List& as_list() const { return *list_; }
  const Dict& as_dict() const { return *dict_; }  // a dict or a namespace's attributes
  Dict& namespace_attributes() const { return *dict_; }
  const Callable& as_callable() const { return *callable_; }
  const std::string& undefined_reason() const;

  // Python's bool(value): empty strings, lists and dicts, zero, None and undefined are false.
  bool truthy() const;
  // Python's type name, for error messages ("str", "list", "dict").
  std::string type_name() const;
  // Nesting depth: 0 for a scalar, 1 for a flat list.
  int nesting() const;

 private:
  Kind kind_ = Kind::Undefined;
  bool boolean_ = false;
  int64_t integer_ = 0;
  double float_ = 0.0;
  std::shared_ptr<const std::string> string_;  // the string, or an undefined value's reason
  std::shared_ptr<const List> list_;
  std::shared_ptr<Dict> dict_;
  std::shared_ptr<const Callable> callable_;
};

struct List {
  std::vector<Value> items;
  bool is_tuple = false;      // prints as (a, b)
  bool is_generator = false;  // see Value::generator
  int nesting = 1;
};

// A dict with string keys, in insertion order (Python's dicts keep it, and
// tojson prints it).
struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  int nesting = 1;
  const Value* find(std::string_view key) const;
  void set(const std::string& key, Value value);  // namespaces only
};

// Positional and keyword arguments of a call, filter or test.
struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keywords;
  // The argument called `name`, or at `position`, or nothing (undefined).
  const Value* get(std::size_t position, std::string_view name) const;
};

struct Callable {
  std::string name;
  std::function<Value(const CallArgs&)> call;
};

// Python's str(value): what {{ value }} prints.
std::string to_text(const Value& value);
// Python's repr(value): how a string looks inside a printed list.
std::string to_repr(const Value& value);
// Python's repr(float): the shortest digits that read back the same, "1.0", "1e+20".
std::string float_text(double value);
// Python's ==.
bool equals(const Value& a, const Value& b);
// Python's <; a Failure for types that do not compare ("'<' not supported between ...").
bool less_than(const Value& a, const Value& b);

}  // namespace tg::tokenizer::jinja
