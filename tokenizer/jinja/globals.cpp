// The functions every template can call, as jinja2's sandbox and Hugging Face
// provide them: range (at most MAX_RANGE items), namespace, dict, and
// raise_exception, which Hugging Face adds so a template can refuse a
// conversation ("Conversation roles must alternate user/assistant/...").
#include <algorithm>
#include <cmath>

#include "tinygpt/tokenizer/jinja/builtins.h"

namespace tg::tokenizer::jinja {

namespace {

// jinja2's sandbox refuses range() longer than this (MAX_RANGE).
constexpr int64_t kMaxRange = 100000;

// namespace(a=1) or namespace({'a': 1}, b=2): the entries, in order.
std::vector<std::pair<std::string, Value>> keyword_entries(const CallArgs& args, const char* what) {
  std::vector<std::pair<std::string, Value>> entries;
  auto add = [&](const std::string& key, const Value& value) {
    for (auto& entry : entries)
      if (entry.first == key) {
        entry.second = value;
        return;
      }
    entries.emplace_back(key, value);
  };
  if (args.positional.size() > 1) throw Failure(std::string(what) + "() takes at most one positional argument");
  if (!args.positional.empty()) {
    if (!args.positional[0].is_dict()) throw Failure(std::string(what) + "()'s positional argument must be a dict");
    for (const auto& [key, value] : args.positional[0].as_dict().entries) add(key, value);
  }
  for (const auto& [key, value] : args.keywords) add(key, value);
  return entries;
}

Value range(const CallArgs& args, Budget& budget) {
  if (!args.keywords.empty()) throw Failure("range() takes no keyword arguments");
  std::vector<int64_t> bounds;
  for (const Value& argument : args.positional) {
    if (argument.is_undefined()) fail_undefined(argument);
    if (!argument.is_integral()) throw Failure("'" + argument.type_name() + "' object cannot be interpreted as an integer");
    bounds.push_back(argument.as_integer());
  }
  if (bounds.empty() || bounds.size() > 3) throw Failure("range() takes 1 to 3 arguments");
  const int64_t start = bounds.size() == 1 ? 0 : bounds[0];
  const int64_t stop = bounds.size() == 1 ? bounds[0] : bounds[1];
  const int64_t step = bounds.size() == 3 ? bounds[2] : 1;
  if (step == 0) throw Failure("range() arg 3 must not be zero");
  // Counted in floating point, so huge bounds cannot overflow.
  const double count =
      std::max(0.0, std::ceil((static_cast<double>(stop) - static_cast<double>(start)) / static_cast<double>(step)));
  if (count > static_cast<double>(kMaxRange))
    throw Failure("Range too big. The sandbox blocks ranges larger than MAX_RANGE (100000).");
  budget.spend_list(static_cast<std::size_t>(count));
  std::vector<Value> items;
  for (int64_t i = 0; i < static_cast<int64_t>(count); ++i) items.push_back(Value::integer(start + i * step));
  return Value::list(std::move(items));
}

}  // namespace

std::vector<std::pair<std::string, Value>> global_functions(Budget& budget) {
  return {
      {"range", Value::callable("range", [&budget](const CallArgs& args) { return range(args, budget); })},
      {"namespace", Value::callable("namespace", [](const CallArgs& args) {
         return Value::namespace_(keyword_entries(args, "namespace"));
       })},
      {"dict", Value::callable("dict", [](const CallArgs& args) { return Value::dict(keyword_entries(args, "dict")); })},
      {"raise_exception", Value::callable("raise_exception", [](const CallArgs& args) -> Value {
         throw RaisedFailure(args.positional.empty() ? "" : to_text(args.positional[0]));
       })},
  };
}

}  // namespace tg::tokenizer::jinja
