// Methods of str, dict and list that templates call: message.content.strip(),
// message.get('name'), tools.items(). Each mirrors the Python method of the
// same name. Methods Python has but this file does not (str.format, and every
// method that changes a list or dict, which Hugging Face's immutable sandbox
// refuses anyway) are a Failure naming them; names Python does not have are
// undefined, as in jinja2.
#include <algorithm>
#include <array>
#include <string_view>

#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer::jinja {

namespace {

constexpr std::array<std::string_view, 47> kStrMethods = {
    "capitalize", "casefold", "center", "count", "encode", "endswith", "expandtabs", "find", "format",
    "format_map", "index", "isalnum", "isalpha", "isascii", "isdecimal", "isdigit", "isidentifier", "islower",
    "isnumeric", "isprintable", "isspace", "istitle", "isupper", "join", "ljust", "lower", "lstrip", "maketrans",
    "partition", "removeprefix", "removesuffix", "replace", "rfind", "rindex", "rjust", "rpartition", "rsplit",
    "rstrip", "split", "splitlines", "startswith", "strip", "swapcase", "title", "translate", "upper", "zfill"};
constexpr std::array<std::string_view, 11> kDictMethods = {"clear", "copy", "fromkeys", "get", "items", "keys",
                                                           "pop", "popitem", "setdefault", "update", "values"};
constexpr std::array<std::string_view, 11> kListMethods = {"append", "clear", "copy", "count", "extend", "index",
                                                           "insert", "pop", "remove", "reverse", "sort"};

// A method Python has and this interpreter does not: the attribute exists (as
// in jinja2, where `x.pop is defined` is true), calling it fails.
Value unsupported_method(const std::string& type, const std::string& name, const char* why) {
  const std::string message = "the method '" + name + "' of " + type + " is not supported" + why;
  return Value::callable(type + "." + name, [message](const CallArgs&) -> Value { throw Failure(message); });
}

template <std::size_t N>
bool has(const std::array<std::string_view, N>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const std::string& string_argument(const CallArgs& args, std::size_t position, const char* name, const char* method) {
  const Value* value = args.get(position, name);
  if (!value || !value->is_string())
    throw Failure(std::string("str.") + method + "() needs a string for '" + name + "'");
  return value->as_string();
}

// Python's str.split(sep, maxsplit) and, from the right, str.rsplit.
std::vector<Value> split(const std::string& text, const Value* separator, int64_t max_splits, bool from_right,
                         Budget& budget) {
  std::vector<std::string> parts;
  if (!separator || separator->is_none()) {
    // Runs of whitespace separate; leading and trailing whitespace is dropped.
    std::vector<std::string> chars = characters(text, budget);
    auto is_space = [&](std::size_t i) { return is_python_space(decode_utf8_char(chars[i], 0).code_point); };
    if (from_right) std::reverse(chars.begin(), chars.end());
    std::size_t i = 0;
    int64_t splits = 0;
    while (true) {
      while (i < chars.size() && is_space(i)) ++i;
      if (i == chars.size()) break;
      std::string part;
      if (max_splits >= 0 && splits == max_splits) {  // the rest, whitespace at its end kept, as in Python
        for (; i < chars.size(); ++i) part += chars[i];
        parts.push_back(part);
        break;
      }
      while (i < chars.size() && !is_space(i)) part += chars[i++];
      parts.push_back(part);
      ++splits;
    }
    if (from_right) {
      std::reverse(parts.begin(), parts.end());
      for (std::string& part : parts) {
        std::vector<std::string> part_chars = characters(part, budget);
        std::reverse(part_chars.begin(), part_chars.end());
        part.clear();
        for (const std::string& c : part_chars) part += c;
      }
    }
  } else {
    if (!separator->is_string()) throw Failure("str.split() needs a string or none as separator");
    const std::string& sep = separator->as_string();
    if (sep.empty()) throw Failure("empty separator");
    if (!from_right) {
      std::size_t start = 0;
      int64_t splits = 0;
      while (max_splits < 0 || splits < max_splits) {
        const std::size_t found = text.find(sep, start);
        if (found == std::string::npos) break;
        parts.push_back(text.substr(start, found - start));
        start = found + sep.size();
        ++splits;
      }
      parts.push_back(text.substr(start));
    } else {
      std::size_t end = text.size();
      int64_t splits = 0;
      while (max_splits < 0 || splits < max_splits) {
        if (end < sep.size()) break;
        const std::size_t found = text.rfind(sep, end - sep.size());
        if (found == std::string::npos) break;
        parts.push_back(text.substr(found + sep.size(), end - found - sep.size()));
        end = found;
        ++splits;
      }
      parts.push_back(text.substr(0, end));
      std::reverse(parts.begin(), parts.end());
    }
  }
  std::vector<Value> out;
  for (std::string& part : parts) out.push_back(Value::string(std::move(part)));
  return out;
}

// Python's str.replace(old, new, count).
std::string replace(const std::string& text, const std::string& old, const std::string& replacement, int64_t count,
                    Budget& budget) {
  std::string out;
  if (old.empty()) {  // "ab".replace("", "-") is "-a-b-"
    const std::vector<std::string> chars = characters(text, budget);
    int64_t done = 0;
    for (std::size_t i = 0; i <= chars.size(); ++i) {
      if (count < 0 || done < count) {
        out += replacement;
        ++done;
      }
      if (i < chars.size()) out += chars[i];
      budget.check_string(out.size());
    }
    return out;
  }
  std::size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const std::size_t found = text.find(old, start);
    if (found == std::string::npos) break;
    out.append(text, start, found - start);
    out += replacement;
    budget.check_string(out.size());
    start = found + old.size();
    ++done;
  }
  out.append(text, start, std::string::npos);
  budget.spend_string(out.size());
  return out;
}

// startswith/endswith take a string or a tuple of strings.
bool affix_matches(const std::string& text, const Value& affix, bool at_start) {
  if (affix.is_list()) {
    for (const Value& one : affix.as_list().items)
      if (affix_matches(text, one, at_start)) return true;
    return false;
  }
  if (!affix.is_string()) throw Failure("startswith/endswith need a string or a tuple of strings");
  const std::string& a = affix.as_string();
  if (a.size() > text.size()) return false;
  return at_start ? text.compare(0, a.size(), a) == 0 : text.compare(text.size() - a.size(), a.size(), a) == 0;
}

int64_t optional_integer(const CallArgs& args, std::size_t position, const char* name, int64_t otherwise) {
  const Value* value = args.get(position, name);
  if (!value || value->is_none()) return otherwise;
  if (!value->is_integral()) throw Failure(std::string("'") + name + "' must be an integer");
  return value->as_integer();
}

Value string_method(const Value& self, const std::string& name, Budget& budget) {
  budget.spend_scan(self.as_string().size());  // every method reads the whole string, at least
  const std::string text = self.as_string();
  auto bind = [&](auto body) { return Value::callable("str." + name, body); };
  if (name == "startswith" || name == "endswith") {
    const bool at_start = name == "startswith";
    return bind([text, at_start](const CallArgs& args) {
      const Value* affix = args.get(0, "prefix");
      if (!affix) throw Failure("startswith/endswith need an argument");
      return Value::boolean(affix_matches(text, *affix, at_start));
    });
  }
  if (name == "split" || name == "rsplit") {
    const bool from_right = name == "rsplit";
    return bind([text, from_right, &budget](const CallArgs& args) {
      std::vector<Value> parts = split(text, args.get(0, "sep"), optional_integer(args, 1, "maxsplit", -1), from_right, budget);
      budget.spend_list(parts.size());
      return Value::list(std::move(parts));
    });
  }
  if (name == "strip" || name == "lstrip" || name == "rstrip") {
    const bool left = name != "rstrip";
    const bool right = name != "lstrip";
    return bind([text, left, right](const CallArgs& args) {
      const Value* chars = args.get(0, "chars");
      if (chars && !chars->is_none() && !chars->is_string()) throw Failure("strip arg must be None or str");
      return Value::string(strip(text, chars && chars->is_string() ? &chars->as_string() : nullptr, left, right));
    });
  }
  if (name == "upper") return bind([text](const CallArgs&) { return Value::string(upper_case(text)); });
  if (name == "lower") return bind([text](const CallArgs&) { return Value::string(lower_case(text)); });
  if (name == "title") return bind([text](const CallArgs&) { return Value::string(title_case(text)); });
  if (name == "capitalize") return bind([text](const CallArgs&) { return Value::string(capitalized(text)); });
  if (name == "replace") {
    return bind([text, &budget](const CallArgs& args) {
      const std::string& old = string_argument(args, 0, "old", "replace");
      const std::string& replacement = string_argument(args, 1, "new", "replace");
      return Value::string(replace(text, old, replacement, optional_integer(args, 2, "count", -1), budget));
    });
  }
  if (name == "join") {
    return bind([text, &budget](const CallArgs& args) {
      const Value* items = args.get(0, "iterable");
      if (!items) throw Failure("str.join() needs an iterable");
      std::string out;
      bool first = true;
      for (const Value& part : iterate(*items, budget)) {
        if (!part.is_string()) throw Failure("str.join() found a " + part.type_name() + " where it expects a str");
        if (!first) out += text;
        out += part.as_string();
        first = false;
        budget.check_string(out.size());
      }
      budget.spend_string(out.size());
      return Value::string(std::move(out));
    });
  }
  if (name == "find" || name == "count") {
    const bool counts = name == "count";
    return bind([text, counts](const CallArgs& args) {
      const std::string& needle = string_argument(args, 0, "sub", counts ? "count" : "find");
      if (!counts) {
        const std::size_t at = text.find(needle);
        return Value::integer(at == std::string::npos ? -1 : static_cast<int64_t>(character_count(text.substr(0, at))));
      }
      if (needle.empty()) return Value::integer(static_cast<int64_t>(character_count(text)) + 1);
      int64_t found = 0;
      for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size()))
        ++found;
      return Value::integer(found);
    });
  }
  if (name == "removeprefix" || name == "removesuffix") {
    const bool prefix = name == "removeprefix";
    return bind([text, prefix](const CallArgs& args) {
      const std::string& affix = string_argument(args, 0, prefix ? "prefix" : "suffix", prefix ? "removeprefix" : "removesuffix");
      if (!affix_matches(text, Value::string(affix), prefix)) return Value::string(text);
      return Value::string(prefix ? text.substr(affix.size()) : text.substr(0, text.size() - affix.size()));
    });
  }
  if (has(kStrMethods, name)) return unsupported_method("str", name, "");
  return Value();
}

Value dict_method(const Value& self, const std::string& name, Budget& budget) {
  auto bind = [&](auto body) { return Value::callable("dict." + name, body); };
  if (name == "get") {
    return bind([self](const CallArgs& args) {
      const Value* key = args.get(0, "key");
      if (!key) throw Failure("dict.get() needs a key");
      const Value* found = key->is_string() ? self.as_dict().find(key->as_string()) : nullptr;
      if (found) return *found;
      const Value* otherwise = args.get(1, "default");
      return otherwise ? *otherwise : Value::none();
    });
  }
  if (name == "items" || name == "keys" || name == "values") {
    return bind([self, name, &budget](const CallArgs&) {
      std::vector<Value> out;
      budget.spend_list(self.as_dict().entries.size());
      for (const auto& [key, value] : self.as_dict().entries) {
        if (name == "items") out.push_back(Value::list({Value::string(key), value}, true));
        else if (name == "keys") out.push_back(Value::string(key));
        else out.push_back(value);
      }
      return Value::list(std::move(out));
    });
  }
  if (has(kDictMethods, name)) return unsupported_method("dict", name, " (templates cannot change their inputs)");
  return Value();
}

}  // namespace

Value method(const Value& object, const std::string& name, Budget& budget) {
  if (object.is_string()) return string_method(object, name, budget);
  if (object.is_dict()) return dict_method(object, name, budget);
  if (object.is_list() && has(kListMethods, name)) return unsupported_method("list", name, "");
  return Value();
}

}  // namespace tg::tokenizer::jinja
