// Python's json.dumps, which Hugging Face's `tojson` filter calls as
// json.dumps(x, ensure_ascii=False, indent=indent, separators=separators,
// sort_keys=sort_keys). Byte-level details that matter for a prompt:
// ", " and ": " between items unless indenting (then "," and newlines),
// floats as Python's repr (1.0, 1e-05), NaN and Infinity spelled so, and
// only control characters, quotes and backslashes escaped unless ensure_ascii.
#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer::jinja {

namespace {

void append_json_string(std::string& out, const std::string& text, bool ensure_ascii) {
  out += '"';
  for (std::size_t i = 0; i < text.size();) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte >= 0x80) {
      const Utf8Char ch = decode_utf8_char(text, i);
      if (!ensure_ascii) {
        out.append(text, i, ch.length);
      } else {
        char escaped[16];
        if (ch.code_point >= 0x10000) {
          const char32_t v = ch.code_point - 0x10000;
          std::snprintf(escaped, sizeof escaped, "\\u%04x\\u%04x", static_cast<unsigned>(0xD800 + (v >> 10)),
                        static_cast<unsigned>(0xDC00 + (v & 0x3FF)));
        } else {
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(ch.code_point));
        }
        out += escaped;
      }
      i += ch.length;
      continue;
    }
    switch (byte) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (byte < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
          out += escaped;
        } else {
          out += static_cast<char>(byte);
        }
    }
    ++i;
  }
  out += '"';
}

class JsonWriter {
 public:
  JsonWriter(const JsonFormat& format, Budget& budget) : format_(format), budget_(budget) {}

  void write(const Value& value, int level) {
    switch (value.kind()) {
      case Value::Kind::None: out_ += "null"; break;
      case Value::Kind::Boolean: out_ += value.as_bool() ? "true" : "false"; break;
      case Value::Kind::Integer: out_ += std::to_string(value.as_integer()); break;
      case Value::Kind::Float: {
        const double d = value.as_double();
        if (std::isnan(d)) out_ += "NaN";
        else if (std::isinf(d)) out_ += d < 0 ? "-Infinity" : "Infinity";
        else out_ += float_text(d);
        break;
      }
      case Value::Kind::String: append_json_string(out_, value.as_string(), format_.ensure_ascii); break;
      case Value::Kind::List: {
        if (value.as_list().is_generator) throw Failure("Object of type generator is not JSON serializable");
        const auto& items = value.as_list().items;
        if (items.empty()) {
          out_ += "[]";
          break;
        }
        out_ += '[';
        for (std::size_t i = 0; i < items.size(); ++i) {
          if (i) out_ += format_.item_separator;
          newline(level + 1);
          write(items[i], level + 1);
        }
        newline(level);
        out_ += ']';
        break;
      }
      case Value::Kind::Dict: {
        std::vector<const std::pair<std::string, Value>*> entries;
        for (const auto& entry : value.as_dict().entries) entries.push_back(&entry);
        if (entries.empty()) {
          out_ += "{}";
          break;
        }
        if (format_.sort_keys)
          std::stable_sort(entries.begin(), entries.end(), [](auto* a, auto* b) { return a->first < b->first; });
        out_ += '{';
        for (std::size_t i = 0; i < entries.size(); ++i) {
          if (i) out_ += format_.item_separator;
          newline(level + 1);
          append_json_string(out_, entries[i]->first, format_.ensure_ascii);
          out_ += format_.key_separator;
          write(entries[i]->second, level + 1);
        }
        newline(level);
        out_ += '}';
        break;
      }
      default: throw Failure("Object of type " + value.type_name() + " is not JSON serializable");
    }
    budget_.check_string(out_.size());
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int level) {
    if (!format_.has_indent) return;
    out_ += '\n';
    for (int i = 0; i < level; ++i) out_ += format_.indent;
  }

  const JsonFormat& format_;
  Budget& budget_;
  std::string out_;
};

}  // namespace

std::string json_text(const Value& value, const JsonFormat& format, Budget& budget) {
  JsonWriter writer(format, budget);
  writer.write(value, 0);
  std::string text = writer.take();
  budget.spend_string(text.size());
  return text;
}

}  // namespace tg::tokenizer::jinja
