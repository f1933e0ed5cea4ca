#include "tinygpt/tokenizer/hf_normalizers.h"

#include <cstdlib>
#include <memory>

#include <utf8proc.h>

#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

// utf8proc's composition or decomposition of valid UTF-8 (NFC: STABLE | COMPOSE).
void unicode_normalize(std::string& text, int options) {
  utf8proc_uint8_t* result = nullptr;
  const utf8proc_ssize_t length =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &result, static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (length < 0) throw EncodeError(std::string("Unicode normalization failed: ") + utf8proc_errmsg(length));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(result, &std::free);
  text.assign(reinterpret_cast<const char*>(result), static_cast<std::size_t>(length));
}

// The regex or string of a "pattern": {"String": " "} or {"Regex": "\\s+"}.
void read_pattern(const HfField& pattern, std::string& literal, std::optional<HfRegex>& regex) {
  if (pattern.has("String")) {
    literal = pattern.child("String").string();
    if (literal.empty()) pattern.child("String").fail("an empty pattern matches nowhere useful; refused");
  } else if (pattern.has("Regex")) {
    const HfField source = pattern.child("Regex");
    regex.emplace(source.string(), source.file, source.path);
  } else {
    pattern.fail("expected {\"String\": ...} or {\"Regex\": ...}");
  }
}

}  // namespace

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  std::size_t found = text.find(from);
  if (found == std::string::npos) return;
  std::string out;
  out.reserve(text.size() + text.size() / 4);
  std::size_t done = 0;
  for (; found != std::string::npos; found = text.find(from, done)) {
    out.append(text, done, found - done).append(to);
    done = found + from.size();
  }
  out.append(text, done);
  text = std::move(out);
}

HfNormalizer HfNormalizer::read(const HfField& field) {
  HfNormalizer normalizer;
  if (!field.node.is_null()) read_into(field, normalizer.steps_);
  return normalizer;
}

void HfNormalizer::read_into(const HfField& field, std::vector<Step>& steps) {
  const std::string type = field.type();
  if (type == "Sequence") {
    const HfField list = field.child("normalizers");
    if (!list.node.is_array()) list.fail("expected a list");
    for (std::size_t i = 0; i < list.node.size(); ++i) read_into(list.at(i), steps);
  } else if (type == "NFC") {
    steps.push_back({Kind::nfc, {}, {}, {}});
  } else if (type == "NFD") {
    steps.push_back({Kind::nfd, {}, {}, {}});
  } else if (type == "NFKC") {
    steps.push_back({Kind::nfkc, {}, {}, {}});
  } else if (type == "NFKD") {
    steps.push_back({Kind::nfkd, {}, {}, {}});
  } else if (type == "Prepend") {
    steps.push_back({Kind::prepend, field.child("prepend").string(), {}, {}});
  } else if (type == "Replace") {
    Step step{Kind::replace, field.child("content").string(), {}, {}};
    read_pattern(field.child("pattern"), step.literal, step.regex);
    steps.push_back(std::move(step));
  } else {
    field.child("type").fail("the normalizer '" + type +
                             "' is not supported (NFC, NFD, NFKC, NFKD, Prepend, Replace and Sequence are)");
  }
}

void HfNormalizer::normalize(std::string& text) const {
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::nfc: unicode_normalize(text, UTF8PROC_COMPOSE); break;
      case Kind::nfd: unicode_normalize(text, UTF8PROC_DECOMPOSE); break;
      case Kind::nfkc: unicode_normalize(text, UTF8PROC_COMPOSE | UTF8PROC_COMPAT); break;
      case Kind::nfkd: unicode_normalize(text, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); break;
      case Kind::prepend:
        if (!text.empty()) text.insert(0, step.text);
        break;
      case Kind::replace:
        if (!step.regex) {
          replace_all(text, step.literal, step.text);
          break;
        }
        std::string out;
        std::size_t done = 0;
        while (done <= text.size()) {
          const std::optional<TextRange> match = step.regex->find(text, done);
          if (!match) break;
          out.append(text, done, match->start - done).append(step.text);
          done = match->end;
          if (match->end > match->start) continue;
          if (done == text.size()) break;
          // An empty match: keep the next character and look after it.
          const std::size_t length = decode_utf8_char(text, done).length;
          out.append(text, done, length);
          done += length;
        }
        out.append(text, done);
        text = std::move(out);
        break;
    }
  }
}

}  // namespace tg::tokenizer
