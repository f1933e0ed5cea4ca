// Reading parts of values: jinja2's Environment.getattr and getitem, Python's
// slicing, and what a for loop iterates over.
//
// jinja2 tries the Python attribute first for `obj.name` and the item first
// for `obj['name']`, falling back to the other; when both fail the result is
// undefined (so a missing key prints as "" and tests as not defined).
#include <string>

#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer::jinja {

void fail_undefined(const Value& undefined) { throw UndefinedFailure(undefined.undefined_reason()); }

std::size_t character_count(const std::string& text) {
  std::size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return count;
}

std::vector<std::string> characters(const std::string& text, Budget& budget) {
  budget.spend_list(character_count(text));
  std::vector<std::string> out;
  for (std::size_t i = 0; i < text.size();) {
    const std::size_t length = decode_utf8_char(text, i).length;
    out.push_back(text.substr(i, length));
    i += length;
  }
  return out;
}

namespace {

// Byte offsets where each character of `text` starts, and text.size() last.
std::vector<std::size_t> character_starts(const std::string& text) {
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  starts.push_back(text.size());
  return starts;
}

// jinja2's words for what is missing: "'dict object' has no attribute 'x'"
// (the type quoted), "list object has no element 3" (not quoted).
std::string type_label(const Value& object) { return object.is_none() ? "None" : object.type_name() + " object"; }

Value missing_attribute(const Value& object, const std::string& name) {
  std::string reason = "'";
  reason += type_label(object);
  reason += "' has no attribute ";
  reason += to_repr(Value::string(name));
  return Value::undefined(std::move(reason));
}

Value missing_element(const Value& object, const Value& key) {
  std::string reason = type_label(object);
  reason += " has no element ";
  reason += to_repr(key);
  return Value::undefined(std::move(reason));
}

// A Python index (negative counts from the end) into a sequence of `size`,
// or -1 when it is out of range.
int64_t resolve_index(int64_t index, std::size_t size) {
  const auto length = static_cast<int64_t>(size);
  if (index < 0) index += length;
  return index >= 0 && index < length ? index : -1;
}

}  // namespace

Value attribute(const Value& object, const std::string& name, Budget& budget) {
  if (object.is_undefined()) fail_undefined(object);
  if (object.is_namespace()) {
    const Value* found = object.as_dict().find(name);
    return found ? *found : missing_attribute(object, name);
  }
  if (object.is_string() || object.is_dict() || object.is_list()) {
    Value bound = method(object, name, budget);
    if (!bound.is_undefined()) return bound;
    if (object.is_dict()) {
      const Value* found = object.as_dict().find(name);
      if (found) return *found;
    }
  }
  return missing_attribute(object, name);
}

Value item(const Value& object, const Value& key, Budget& budget) {
  if (object.is_undefined()) fail_undefined(object);
  if (object.is_dict() || object.is_namespace()) {
    if (key.is_string()) {
      const Value* found = object.as_dict().find(key.as_string());
      if (found) return *found;
      if (object.is_dict()) return attribute(object, key.as_string(), budget);
    }
    return missing_element(object, key);
  }
  if (object.is_list() && object.as_list().is_generator) throw Failure("'generator' object is not subscriptable");
  if ((object.is_list() || object.is_string()) && key.is_integral()) {
    if (object.is_list()) {
      const auto& items = object.as_list().items;
      const int64_t index = resolve_index(key.as_integer(), items.size());
      if (index >= 0) return items[static_cast<std::size_t>(index)];
    } else {
      const std::string& text = object.as_string();
      budget.spend_scan(text.size());
      const int64_t index = resolve_index(key.as_integer(), character_count(text));
      if (index >= 0) {  // walk to the character: no table of offsets for one lookup
        std::size_t start = 0;
        for (int64_t seen = -1; start < text.size(); ++start)
          if ((static_cast<unsigned char>(text[start]) & 0xC0) != 0x80 && ++seen == index) break;
        std::size_t end = start + 1;
        while (end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) ++end;
        return Value::string(text.substr(start, end - start));
      }
    }
    return missing_element(object, key);
  }
  if (key.is_string()) return attribute(object, key.as_string(), budget);
  return missing_element(object, key);
}

// Python's slice.indices() and the walk it describes.
Value slice(const Value& object, const Value& start_value, const Value& stop_value, const Value& step_value,
            Budget& budget) {
  if (object.is_undefined()) fail_undefined(object);
  auto bound = [](const Value& v, const char* what) -> const Value* {
    if (v.is_undefined() || v.is_none()) return nullptr;
    if (!v.is_integral()) throw Failure(std::string("slice ") + what + " must be an integer or none, not " + v.type_name());
    return &v;
  };
  const Value* start_bound = bound(start_value, "start");
  const Value* stop_bound = bound(stop_value, "stop");
  const Value* step_bound = bound(step_value, "step");
  const int64_t step = step_bound ? step_bound->as_integer() : 1;
  if (step == 0) throw Failure("slice step cannot be zero");

  std::vector<std::size_t> starts;
  std::size_t size = 0;
  if (object.is_string()) {
    // The offsets take 8 bytes a character: charged as such.
    budget.spend_scan(object.as_string().size() * (1 + sizeof(std::size_t)));
    starts = character_starts(object.as_string());
    size = starts.size() - 1;
  } else if (object.is_list() && !object.as_list().is_generator) {
    size = object.as_list().items.size();
  } else {
    throw Failure("'" + object.type_name() + "' object is not subscriptable");
  }
  const auto length = static_cast<int64_t>(size);
  auto adjust = [&](const Value* b, int64_t if_missing) {
    if (!b) return if_missing;
    int64_t i = b->as_integer();
    if (i < 0) {
      i += length;
      if (i < 0) i = step < 0 ? -1 : 0;
    } else if (i >= length) {
      i = step < 0 ? length - 1 : length;
    }
    return i;
  };
  const int64_t start = adjust(start_bound, step < 0 ? length - 1 : 0);
  const int64_t stop = adjust(stop_bound, step < 0 ? -1 : length);
  std::vector<std::size_t> picked;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) picked.push_back(static_cast<std::size_t>(i));

  if (object.is_string()) {
    std::string out;
    const std::string& text = object.as_string();
    for (const std::size_t i : picked) out.append(text, starts[i], starts[i + 1] - starts[i]);
    budget.spend_string(out.size());
    return Value::string(std::move(out));
  }
  budget.spend_list(picked.size());
  std::vector<Value> out;
  out.reserve(picked.size());
  for (const std::size_t i : picked) out.push_back(object.as_list().items[i]);
  return Value::list(std::move(out), object.as_list().is_tuple);
}

std::vector<Value> iterate(const Value& value, Budget& budget) {
  switch (value.kind()) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return value.as_list().items;
    case Value::Kind::Dict: {
      budget.spend_list(value.as_dict().entries.size());
      std::vector<Value> keys;
      for (const auto& entry : value.as_dict().entries) keys.push_back(Value::string(entry.first));
      return keys;
    }
    case Value::Kind::String: {
      std::vector<Value> out;
      for (std::string& c : characters(value.as_string(), budget)) out.push_back(Value::string(std::move(c)));
      return out;
    }
    default: throw Failure("'" + value.type_name() + "' object is not iterable");
  }
}

}  // namespace tg::tokenizer::jinja
