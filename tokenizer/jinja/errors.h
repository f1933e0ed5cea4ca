// The errors of the Jinja interpreter that renders chat templates.
//
// Every message starts with the template's name and line ("chat template
// line 12: the filter 'wordwrap' is not supported"), because the person who
// reads it has a tokenizer_config.json open and needs to find the spot.
// Both derive from TokenizerError (tokenizer/errors.h): catching that catches
// these too.
#pragma once

#include <string>

#include "tinygpt/tokenizer/errors.h"

namespace tg::tokenizer::jinja {

// A template that cannot be parsed, uses something this interpreter does not
// support, fails while rendering (an undefined method, a type error), or
// exceeds a limit (output size, loop iterations, nesting).
class TemplateError : public TokenizerError {
 public:
  TemplateError(const std::string& template_name, int line, const std::string& description)
      : TokenizerError(template_name + " line " + std::to_string(line) + ": " + description),
        line_(line), description_(description) {}
  int line() const { return line_; }
  // The message without the "<template> line N: " prefix.
  const std::string& description() const { return description_; }

 private:
  int line_;
  std::string description_;
};

// The template itself refused the input with raise_exception(message), as
// Hugging Face's templates do for roles out of order. template_message() is
// the template's own text, unchanged.
class TemplateRaisedError : public TemplateError {
 public:
  TemplateRaisedError(const std::string& template_name, int line, const std::string& template_message)
      : TemplateError(template_name, line, "raise_exception: " + template_message),
        template_message_(template_message) {}
  const std::string& template_message() const { return template_message_; }

 private:
  std::string template_message_;
};

}  // namespace tg::tokenizer::jinja
