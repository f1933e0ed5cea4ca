// The lexer of the Jinja interpreter: see lexer.h for the whitespace rules,
// which follow jinja2 3.1's lexer (Lexer.tokeniter) case by case.
#include "tinygpt/tokenizer/jinja/lexer.h"

#include <cctype>
#include <cstdio>

#include "tinygpt/tokenizer/jinja/builtins.h"
#include "tinygpt/tokenizer/jinja/errors.h"
#include "tinygpt/tokenizer/utf8.h"

namespace tg::tokenizer::jinja {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

// Where the run of whitespace ending at `end` starts. Whitespace is Python's
// (\s in jinja2's patterns, str.rstrip()): Unicode spaces such as U+3000 too.
std::size_t space_run_start(const std::string& text, std::size_t end) {
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    const Utf8Char ch = decode_utf8_char(text, start);
    if (!ch.valid || start + ch.length != end || !is_python_space(ch.code_point)) break;
    end = start;
  }
  return end;
}

// Where the run of whitespace starting at `begin` ends.
std::size_t space_run_end(const std::string& text, std::size_t begin) {
  while (begin < text.size()) {
    const Utf8Char ch = decode_utf8_char(text, begin);
    if (!ch.valid || !is_python_space(ch.code_point)) break;
    begin += ch.length;
  }
  return begin;
}

// "\r\n", "\r" and "\n" all become "\n"; jinja2 then drops one trailing
// newline unless keep_trailing_newline is set.
std::string normalise_newlines(std::string_view source, bool keep_trailing_newline) {
  std::string text;
  text.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] == '\r') {
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
      text += '\n';
    } else {
      text += source[i];
    }
  }
  if (!keep_trailing_newline && !text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

int count_newlines(std::string_view text) {
  int count = 0;
  for (const char c : text) count += c == '\n';
  return count;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string_view source, const std::string& name, const LexerOptions& options)
      : source_(normalise_newlines(source, options.keep_trailing_newline)), name_(name), options_(options) {}

  std::vector<Token> run() {
    bool line_starting = true;  // the previous match ended with "\n" (jinja2's line_starting)
    while (position_ < source_.size()) {
      const std::size_t tag = find_tag(position_);
      std::string text = source_.substr(position_, tag - position_);
      if (tag == source_.size()) {
        emit_text(std::move(text));
        position_ = tag;
        break;
      }
      const char kind = source_[tag + 1];  // '{', '%' or '#'
      const char sign = tag + 2 < source_.size() ? source_[tag + 2] : '\0';
      const int text_newlines = count_newlines(text);
      if (sign == '-') {
        text.resize(space_run_start(text, text.size()));
      } else if (sign != '+' && options_.lstrip_blocks && kind != '{') {
        const std::size_t line_start = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
        if ((line_start > 0 || line_starting) && line_start < text.size()) {
          if (space_run_end(text, line_start) == text.size()) text.resize(line_start);
        }
      }
      emit_text(std::move(text));
      line_ += text_newlines;
      position_ = tag + 2 + (sign == '-' || sign == '+' ? 1 : 0);
      if (kind == '#') skip_comment();
      else lex_tag(kind == '%');
      line_starting = position_ > 0 && source_[position_ - 1] == '\n';
    }
    tokens_.push_back({Token::Kind::End, "", line_});
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void fail(const std::string& description) const { throw TemplateError(name_, line_, description); }

  // The first "{{", "{%" or "{#" at or after `from`, or the end of the source.
  std::size_t find_tag(std::size_t from) const {
    for (std::size_t i = from; i + 1 < source_.size(); ++i)
      if (source_[i] == '{' && (source_[i + 1] == '{' || source_[i + 1] == '%' || source_[i + 1] == '#')) return i;
    return source_.size();
  }

  void emit_text(std::string text) {
    if (!text.empty()) tokens_.push_back({Token::Kind::Text, std::move(text), line_});
  }

  // Moves past "-X}" (and the whitespace after it), "+X}", or "X}" (and one
  // newline when `trims` is set, as trim_blocks does for blocks and comments).
  void close_tag(std::size_t closer, bool trims) {
    if (source_[closer] == '-') {
      const std::size_t end = space_run_end(source_, closer + 3);
      line_ += count_newlines(std::string_view(source_).substr(closer + 3, end - closer - 3));
      position_ = end;
    } else if (source_[closer] == '+') {
      position_ = closer + 3;
    } else {
      position_ = closer + 2;
      if (trims && options_.trim_blocks && position_ < source_.size() && source_[position_] == '\n') {
        ++position_;
        ++line_;
      }
    }
  }

  void skip_comment() {
    const std::size_t end = source_.find("#}", position_);
    if (end == std::string::npos) fail("the comment is not closed with '#}'");
    const std::size_t closer = end > position_ && (source_[end - 1] == '-' || source_[end - 1] == '+') ? end - 1 : end;
    line_ += count_newlines(std::string_view(source_).substr(position_, closer - position_));
    close_tag(closer, true);
  }

  // Tokens of an expression or statement up to its closing "}}" or "%}".
  void lex_tag(bool is_block) {
    const int start_line = line_;
    tokens_.push_back({is_block ? Token::Kind::BlockBegin : Token::Kind::VariableBegin, "", line_});
    if (is_block) reject_raw();
    const char closing = is_block ? '%' : '}';
    int open_brackets = 0;
    while (true) {
      while (position_ < source_.size() && is_space(source_[position_])) {
        line_ += source_[position_] == '\n';
        ++position_;
      }
      if (position_ >= source_.size())
        throw TemplateError(name_, start_line, is_block ? "the tag is not closed with '%}'" : "the expression is not closed with '}}'");
      // An end marker counts only outside brackets: "{{ {'a': {'b': 1}} }}".
      if (open_brackets == 0) {
        for (const char sign : {'-', '+', '\0'}) {
          const std::size_t at = position_ + (sign ? 1 : 0);
          if ((sign == '\0' || source_[position_] == sign) && at + 1 < source_.size() + 0 &&
              source_[at] == closing && source_[at + 1] == '}') {
            tokens_.push_back({is_block ? Token::Kind::BlockEnd : Token::Kind::VariableEnd, "", line_});
            close_tag(position_, is_block);
            return;
          }
        }
      }
      const char c = source_[position_];
      if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        lex_name();
      } else if (std::isdigit(static_cast<unsigned char>(c))) {
        lex_number();
      } else if (c == '\'' || c == '"') {
        lex_string();
      } else {
        lex_operator(open_brackets);
      }
    }
  }

  void reject_raw() {
    std::size_t i = position_;
    while (i < source_.size() && is_space(source_[i])) ++i;
    if (source_.compare(i, 3, "raw") == 0 && (i + 3 >= source_.size() || !std::isalnum(static_cast<unsigned char>(source_[i + 3]))))
      fail("the tag 'raw' is not supported");
  }

  void lex_name() {
    const std::size_t start = position_;
    while (position_ < source_.size() &&
           (std::isalnum(static_cast<unsigned char>(source_[position_])) || source_[position_] == '_'))
      ++position_;
    tokens_.push_back({Token::Kind::Name, source_.substr(start, position_ - start), line_});
  }

  // Digits with optional underscores: "1_000".
  std::string digits() {
    std::string text;
    while (position_ < source_.size()) {
      const char c = source_[position_];
      if (std::isdigit(static_cast<unsigned char>(c))) text += c;
      else if (c == '_' && position_ + 1 < source_.size() && std::isdigit(static_cast<unsigned char>(source_[position_ + 1])) && !text.empty()) {}
      else break;
      ++position_;
    }
    return text;
  }

  // 42, 3.14, 1e5, 2.5e-3 (jinja2 has no "1." and no hexadecimal here).
  // After a dot only an integer is read, so `x.1.0` is x[1][0].
  void lex_number() {
    const bool after_dot = position_ > 0 && source_[position_ - 1] == '.';
    std::string text = digits();
    if (after_dot) {
      tokens_.push_back({Token::Kind::Integer, text, line_});
      return;
    }
    bool is_float = false;
    if (position_ + 1 < source_.size() && source_[position_] == '.' &&
        std::isdigit(static_cast<unsigned char>(source_[position_ + 1]))) {
      ++position_;
      text += '.';
      text += digits();
      is_float = true;
    }
    if (position_ < source_.size() && (source_[position_] == 'e' || source_[position_] == 'E')) {
      std::size_t after = position_ + 1;
      if (after < source_.size() && (source_[after] == '+' || source_[after] == '-')) ++after;
      if (after < source_.size() && std::isdigit(static_cast<unsigned char>(source_[after]))) {
        text += 'e';
        if (source_[position_ + 1] == '-') text += '-';
        position_ = after;
        text += digits();
        is_float = true;
      }
    }
    tokens_.push_back({is_float ? Token::Kind::Float : Token::Kind::Integer, text, line_});
  }

  // A quoted string, decoded as jinja2 does: Python's "unicode-escape" on the
  // text between the quotes (\n, \t, \xhh, \uhhhh, \Uhhhhhhhh, octal, \\, \',
  // \"; an unknown escape keeps its backslash).
  void lex_string() {
    const char quote = source_[position_];
    const int start_line = line_;
    std::string value;
    std::size_t i = position_ + 1;
    while (true) {
      if (i >= source_.size()) throw TemplateError(name_, start_line, "the string is not closed");
      const char c = source_[i];
      if (c == quote) break;
      if (c == '\n') ++line_;
      if (c != '\\') {
        value += c;
        ++i;
        continue;
      }
      if (i + 1 >= source_.size()) throw TemplateError(name_, start_line, "the string is not closed");
      i = decode_escape(i + 1, value);
    }
    position_ = i + 1;
    tokens_.push_back({Token::Kind::String, std::move(value), start_line});
  }

  // Decodes the escape whose letter is at source_[i]; returns the index after it.
  std::size_t decode_escape(std::size_t i, std::string& value) {
    const char c = source_[i];
    switch (c) {
      case '\n': ++line_; return i + 1;  // a backslash-newline joins lines
      case '\\': value += '\\'; return i + 1;
      case '\'': value += '\''; return i + 1;
      case '"': value += '"'; return i + 1;
      case 'a': value += '\a'; return i + 1;
      case 'b': value += '\b'; return i + 1;
      case 'f': value += '\f'; return i + 1;
      case 'n': value += '\n'; return i + 1;
      case 'r': value += '\r'; return i + 1;
      case 't': value += '\t'; return i + 1;
      case 'v': value += '\v'; return i + 1;
      case 'x':
      case 'u':
      case 'U': {
        const std::size_t width = c == 'x' ? 2 : c == 'u' ? 4 : 8;
        char32_t code_point = 0;
        for (std::size_t k = 0; k < width; ++k) {
          const int digit = i + 1 + k < source_.size() ? hex_value(source_[i + 1 + k]) : -1;
          if (digit < 0) fail(std::string("the string has a truncated \\") + c + " escape");
          code_point = code_point * 16 + static_cast<char32_t>(digit);
        }
        if (code_point > 0x10FFFF || (code_point >= 0xD800 && code_point <= 0xDFFF))
          fail("the string's escape is not a Unicode scalar value");
        append_utf8(value, code_point);
        return i + 1 + width;
      }
      case 'N': fail("\\N{...} escapes in strings are not supported");
      default: break;
    }
    if (c >= '0' && c <= '7') {
      char32_t code_point = 0;
      std::size_t k = i;
      while (k < i + 3 && k < source_.size() && source_[k] >= '0' && source_[k] <= '7')
        code_point = code_point * 8 + static_cast<char32_t>(source_[k++] - '0');
      append_utf8(value, code_point);
      return k;
    }
    value += '\\';
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x80) return i;  // unknown escape: the backslash stays, the character follows as text
    // A backslash before a non-ASCII character: jinja2 first writes the
    // character as \xhh, \uhhhh or \Uhhhhhhhh, which the backslash then escapes.
    const Utf8Char ch = decode_utf8_char(source_, i);
    char hex[16];
    if (ch.code_point < 0x100) std::snprintf(hex, sizeof hex, "\\x%02x", static_cast<unsigned>(ch.code_point));
    else if (ch.code_point < 0x10000) std::snprintf(hex, sizeof hex, "\\u%04x", static_cast<unsigned>(ch.code_point));
    else std::snprintf(hex, sizeof hex, "\\U%08x", static_cast<unsigned>(ch.code_point));
    value += hex + 1;  // the escaped backslash is already written
    return i + ch.length;
  }

  void lex_operator(int& open_brackets) {
    static const char* const two_char[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : two_char) {
      if (source_.compare(position_, 2, op) == 0) {
        tokens_.push_back({Token::Kind::Operator, op, line_});
        position_ += 2;
        return;
      }
    }
    const char c = source_[position_];
    static const std::string one_char = "+-*/%~[](){}<>=.:|,;";
    if (one_char.find(c) == std::string::npos) {
      const Utf8Char ch = decode_utf8_char(source_, position_);
      fail("unexpected character " + describe_char(ch.code_point) + " in a tag");
    }
    if (c == '(' || c == '[' || c == '{') ++open_brackets;
    if ((c == ')' || c == ']' || c == '}') && open_brackets > 0) --open_brackets;
    tokens_.push_back({Token::Kind::Operator, std::string(1, c), line_});
    ++position_;
  }

  std::string source_;
  const std::string& name_;
  const LexerOptions& options_;
  std::size_t position_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> tokenize(std::string_view source, const std::string& template_name, const LexerOptions& options) {
  return Lexer(source, template_name, options).run();
}

}  // namespace tg::tokenizer::jinja
