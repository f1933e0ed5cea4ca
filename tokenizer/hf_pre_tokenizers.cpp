#include "tinygpt/tokenizer/hf_pre_tokenizers.h"

#include <algorithm>
#include <utility>

#include <utf8proc.h>

#include "tinygpt/tokenizer/gpt2_pretokenizer.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer {

namespace {

// A span of a piece and whether the pattern matched it (before the behaviour decides).
struct Span {
  std::size_t start;
  std::size_t end;
  bool is_match;
};

// Rust's char::is_numeric: the general categories Nd, Nl and No.
bool is_numeric(char32_t code_point) {
  if (code_point < 128) return code_point >= '0' && code_point <= '9';
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(code_point));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL || category == UTF8PROC_CATEGORY_NO;
}

// Matches of `literal` in `text`, with the gaps between them, as Hugging Face's
// Pattern for a &str does.
void literal_spans(std::string_view text, std::string_view literal, std::vector<Span>& spans) {
  std::size_t done = 0;
  for (std::size_t found = text.find(literal); found != std::string_view::npos; found = text.find(literal, done)) {
    if (found > done) spans.push_back({done, found, false});
    spans.push_back({found, found + literal.size(), true});
    done = found + literal.size();
  }
  if (done < text.size()) spans.push_back({done, text.size(), false});
}

void regex_spans(std::string_view text, const HfRegex& regex, std::vector<Span>& spans) {
  std::size_t done = 0, at = 0;
  while (at <= text.size()) {
    const std::optional<TextRange> match = regex.find(text, at);
    if (!match) break;
    if (match->start > done) spans.push_back({done, match->start, false});
    spans.push_back({match->start, match->end, true});
    done = match->end;
    // After an empty match, look again one character on (as Rust's find_iter does).
    at = match->end > match->start ? match->end
         : match->end < text.size() ? match->end + decode_utf8_char(text, match->end).length
                                    : text.size() + 1;
  }
  if (done < text.size()) spans.push_back({done, text.size(), false});
}

// Each numeric character is a match of its own; the runs between are not.
void digit_spans(std::string_view text, std::vector<Span>& spans) {
  std::size_t done = 0;
  for (std::size_t at = 0; at < text.size();) {
    const Utf8Char character = decode_utf8_char(text, at);
    if (is_numeric(character.code_point)) {
      if (at > done) spans.push_back({done, at, false});
      spans.push_back({at, at + character.length, true});
      done = at + character.length;
    }
    at += character.length;
  }
  if (done < text.size()) spans.push_back({done, text.size(), false});
}

}  // namespace

HfPreTokenizer HfPreTokenizer::read(const HfField& field) {
  HfPreTokenizer pre_tokenizer;
  if (!field.node.is_null()) read_into(field, pre_tokenizer.steps_);
  return pre_tokenizer;
}

void HfPreTokenizer::read_into(const HfField& field, std::vector<Step>& steps) {
  const std::string type = field.type();
  Step step{};
  if (type == "Sequence") {
    const HfField list = field.child("pretokenizers");
    if (!list.node.is_array()) list.fail("expected a list");
    for (std::size_t i = 0; i < list.node.size(); ++i) read_into(list.at(i), steps);
    return;
  }
  if (type == "Split") {
    step.kind = Kind::split;
    const HfField pattern = field.child("pattern");
    if (pattern.has("Regex")) {
      step.regex.emplace(pattern.child("Regex").string(), field.file, pattern.path + ".Regex");
    } else if (pattern.has("String")) {
      step.literal = pattern.child("String").string();
      if (step.literal.empty()) pattern.child("String").fail("an empty pattern is refused");
    } else {
      pattern.fail("expected {\"Regex\": ...} or {\"String\": ...}");
    }
    const HfField behaviour = field.child("behavior");
    const std::string name = behaviour.string();
    if (name == "Isolated") step.behaviour = Behaviour::isolated;
    else if (name == "Removed") step.behaviour = Behaviour::removed;
    else if (name == "MergedWithPrevious") step.behaviour = Behaviour::merged_with_previous;
    else if (name == "MergedWithNext") step.behaviour = Behaviour::merged_with_next;
    else if (name == "Contiguous") step.behaviour = Behaviour::contiguous;
    else behaviour.fail("unknown behavior '" + name + "'");
    step.invert = field.boolean_or("invert", false);
  } else if (type == "ByteLevel") {
    step.kind = Kind::byte_level;
    step.add_prefix_space = field.boolean_or("add_prefix_space", true);
    step.use_regex = field.boolean_or("use_regex", true);
  } else if (type == "Metaspace") {
    step.kind = Kind::metaspace;
    step.literal = field.string_or("replacement", "\xE2\x96\x81");  // "▁"
    const Utf8Char first = decode_utf8_char(step.literal, 0);
    if (step.literal.empty() || !first.valid || first.length != step.literal.size())
      field.child("replacement").fail("expected one character");
    std::string scheme = field.string_or("prepend_scheme", "");
    if (scheme.empty()) scheme = field.boolean_or("add_prefix_space", true) ? "always" : "never";  // older files
    if (scheme == "always") step.prepend = Step::Prepend::always;
    else if (scheme == "first") step.prepend = Step::Prepend::first;
    else if (scheme == "never") step.prepend = Step::Prepend::never;
    else field.child("prepend_scheme").fail("unknown prepend_scheme '" + scheme + "' (first, always or never)");
    step.split = field.boolean_or("split", true);
  } else if (type == "Digits") {
    step.kind = Kind::digits;
    step.individual_digits = field.boolean_or("individual_digits", false);
  } else {
    field.child("type").fail("the pre-tokenizer '" + type +
                             "' is not supported (Split, ByteLevel, Metaspace, Digits and Sequence are)");
  }
  steps.push_back(std::move(step));
}

bool HfPreTokenizer::byte_level() const {
  return std::any_of(steps_.begin(), steps_.end(), [](const Step& step) { return step.kind == Kind::byte_level; });
}

void HfPreTokenizer::pre_tokenize(std::string_view text, bool at_text_start, HfPieces& pieces,
                                  HfPieces& scratch) const {
  pieces.text.assign(text);
  pieces.ranges.clear();
  if (!text.empty()) pieces.ranges.push_back({0, text.size()});
  for (const Step& step : steps_) {
    if (step.kind == Kind::metaspace || (step.kind == Kind::byte_level && step.add_prefix_space))
      edit_pieces(step, at_text_start, pieces, scratch);
    if (step.kind != Kind::byte_level || step.use_regex) split_pieces(step, pieces, scratch.ranges);
  }
}

// Replaces each piece by its parts, as the step's pattern and behaviour cut it.
void HfPreTokenizer::split_pieces(const Step& step, HfPieces& pieces, std::vector<TextRange>& out) const {
  if (step.kind == Kind::metaspace && !step.split) return;
  out.clear();
  thread_local std::vector<Span> spans;
  for (const TextRange range : pieces.ranges) {
    const std::string_view piece = std::string_view(pieces.text).substr(range.start, range.end - range.start);
    if (step.kind == Kind::byte_level) {  // GPT-2's pattern covers the whole text: every piece is a match
      Gpt2PieceScanner scanner(piece);
      for (std::string_view part = scanner.next(); !part.empty(); part = scanner.next()) {
        const std::size_t start = range.start + static_cast<std::size_t>(part.data() - piece.data());
        out.push_back({start, start + part.size()});
      }
      continue;
    }
    spans.clear();
    Behaviour behaviour = step.behaviour;
    if (step.kind == Kind::split) {
      step.regex ? regex_spans(piece, *step.regex, spans) : literal_spans(piece, step.literal, spans);
      if (step.invert)
        for (Span& span : spans) span.is_match = !span.is_match;
    } else if (step.kind == Kind::metaspace) {
      literal_spans(piece, step.literal, spans);
      behaviour = Behaviour::merged_with_next;
    } else {
      digit_spans(piece, spans);
      behaviour = step.individual_digits ? Behaviour::isolated : Behaviour::contiguous;
    }
    // The behaviours, as Hugging Face's NormalizedString::split applies them.
    const std::size_t first = out.size();
    bool previous_match = false;
    if (behaviour == Behaviour::merged_with_next) {
      for (auto span = spans.rbegin(); span != spans.rend(); ++span) {
        if (span->is_match && !previous_match && out.size() > first) out.back().start = range.start + span->start;
        else out.push_back({range.start + span->start, range.start + span->end});
        previous_match = span->is_match;
      }
      std::reverse(out.begin() + static_cast<std::ptrdiff_t>(first), out.end());
      continue;
    }
    for (const Span& span : spans) {
      const TextRange part{range.start + span.start, range.start + span.end};
      const bool extends = out.size() > first &&
          ((behaviour == Behaviour::contiguous && span.is_match == previous_match) ||
           (behaviour == Behaviour::merged_with_previous && span.is_match && !previous_match));
      if (extends) out.back().end = part.end;
      else if (!(behaviour == Behaviour::removed && span.is_match)) out.push_back(part);
      previous_match = span.is_match;
    }
  }
  std::erase_if(out, [](const TextRange& range) { return range.start == range.end; });
  std::swap(pieces.ranges, out);
}

// The steps that change the text of each piece: Metaspace writes spaces as its
// replacement and may prepend one; ByteLevel may prepend a space.
void HfPreTokenizer::edit_pieces(const Step& step, bool at_text_start, HfPieces& pieces, HfPieces& scratch) {
  scratch.text.clear();
  scratch.ranges.clear();
  for (const TextRange range : pieces.ranges) {
    std::string_view piece = std::string_view(pieces.text).substr(range.start, range.end - range.start);
    const std::size_t start = scratch.text.size();
    if (step.kind == Kind::byte_level) {
      if (piece.front() != ' ') scratch.text += ' ';
      scratch.text.append(piece);
    } else {
      const bool first = at_text_start && range.start == 0;
      const bool prepend = piece.substr(0, 1) != " " && piece.substr(0, step.literal.size()) != step.literal &&
          (step.prepend == Step::Prepend::always || (step.prepend == Step::Prepend::first && first));
      if (prepend) scratch.text += step.literal;
      for (char c : piece) {
        if (c == ' ') scratch.text += step.literal;
        else scratch.text += c;
      }
    }
    scratch.ranges.push_back({start, scratch.text.size()});
  }
  std::swap(pieces.text, scratch.text);
  std::swap(pieces.ranges, scratch.ranges);
}

}  // namespace tg::tokenizer
