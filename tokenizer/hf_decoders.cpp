#include "tinygpt/tokenizer/hf_decoders.h"

#include <optional>

#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tokenizer/byte_alphabet.h"
#include "tinygpt/tokenizer/hf_normalizers.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

// The byte of a "<0xNN>" token, or nothing.
std::optional<char> fallback_byte(const std::string& token) {
  if (token.size() != 6 || token.compare(0, 3, "<0x") != 0 || token[5] != '>') return std::nullopt;
  const auto hex = [](char c) { return c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1; };
  const int high = hex(token[3]), low = hex(token[4]);
  if (high < 0 || low < 0) return std::nullopt;
  return static_cast<char>(high * 16 + low);
}

std::size_t count_field(const HfField& field, const char* key) {
  if (!field.has(key)) return 0;
  const std::optional<std::size_t> count = json_integer<std::size_t>(field.child(key).node);
  if (!count) field.child(key).fail("expected a count");
  return *count;
}

}  // namespace

HfDecoder HfDecoder::read(const HfField& field) {
  HfDecoder decoder;
  decoder.present_ = !field.node.is_null();
  if (decoder.present_) read_into(field, decoder.steps_);
  return decoder;
}

void HfDecoder::read_into(const HfField& field, std::vector<Step>& steps) {
  const std::string type = field.type();
  if (type == "Sequence") {
    const HfField list = field.child("decoders");
    if (!list.node.is_array()) list.fail("expected a list");
    for (std::size_t i = 0; i < list.node.size(); ++i) read_into(list.at(i), steps);
  } else if (type == "ByteLevel") {
    steps.push_back({Kind::byte_level, {}, {}});
  } else if (type == "Replace") {
    const HfField pattern = field.child("pattern");
    if (!pattern.has("String")) pattern.fail("only a String pattern is supported in a decoder");
    Step step{Kind::replace, pattern.child("String").string(), field.child("content").string()};
    if (step.from.empty()) pattern.fail("an empty pattern is refused");
    steps.push_back(std::move(step));
  } else if (type == "ByteFallback") {
    steps.push_back({Kind::byte_fallback, {}, {}});
  } else if (type == "Fuse") {
    steps.push_back({Kind::fuse, {}, {}});
  } else if (type == "Strip") {
    Step step{Kind::strip, field.child("content").string(), {}};
    if (decode_utf8_char(step.from, 0).length != step.from.size()) field.child("content").fail("expected one character");
    step.start = count_field(field, "start");
    step.stop = count_field(field, "stop");
    steps.push_back(std::move(step));
  } else if (type == "Metaspace") {
    Step step{Kind::metaspace, field.string_or("replacement", "\xE2\x96\x81"), {}};
    step.prepended = field.string_or("prepend_scheme", field.boolean_or("add_prefix_space", true) ? "always" : "never") !=
                     "never";
    steps.push_back(std::move(step));
  } else {
    field.child("type").fail("the decoder '" + type + "' is not supported (ByteLevel, Replace, ByteFallback, Fuse, "
                             "Strip, Metaspace and Sequence are)");
  }
}

std::string HfDecoder::decode(std::vector<std::string> tokens) const {
  if (!present_) {
    std::string joined;
    for (std::size_t i = 0; i < tokens.size(); ++i) joined += (i > 0 ? " " : "") + tokens[i];
    return joined;
  }
  for (const Step& step : steps_) {
    switch (step.kind) {
      case Kind::byte_level: {
        // A token outside the alphabet (an added token such as "<|im_end|>\n") stays as it is.
        std::string bytes;
        for (const std::string& token : tokens) {
          const std::optional<std::string> decoded = alphabet_text_to_bytes(token);
          bytes += decoded ? *decoded : token;
        }
        tokens.assign(1, std::move(bytes));
        break;
      }
      case Kind::replace:
        for (std::string& token : tokens) replace_all(token, step.from, step.to);
        break;
      case Kind::byte_fallback: {
        std::vector<std::string> out;
        std::string pending;  // consecutive fallback bytes, kept together
        for (std::string& token : tokens) {
          if (const std::optional<char> byte = fallback_byte(token)) {
            pending += *byte;
            continue;
          }
          if (!pending.empty()) out.push_back(std::exchange(pending, {}));
          out.push_back(std::move(token));
        }
        if (!pending.empty()) out.push_back(std::move(pending));
        tokens = std::move(out);
        break;
      }
      case Kind::fuse: {
        std::string joined;
        for (const std::string& token : tokens) joined += token;
        tokens.assign(1, std::move(joined));
        break;
      }
      case Kind::strip:
        for (std::string& token : tokens) {
          std::size_t start = 0, stop = token.size();
          for (std::size_t i = 0; i < step.start && token.compare(start, step.from.size(), step.from) == 0; ++i)
            start += step.from.size();
          for (std::size_t i = 0; i < step.stop && stop >= start + step.from.size() &&
                                  token.compare(stop - step.from.size(), step.from.size(), step.from) == 0;
               ++i)
            stop -= step.from.size();
          token = token.substr(start, stop - start);
        }
        break;
      case Kind::metaspace:
        for (std::size_t i = 0; i < tokens.size(); ++i)
          replace_all(tokens[i], step.from, i == 0 && step.prepended ? "" : " ");
        break;
    }
  }
  std::string text;
  for (const std::string& token : tokens) text += token;
  return text;
}

}  // namespace tg::tokenizer
