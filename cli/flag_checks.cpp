#include "cli/flag_checks.h"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>

namespace tg::cli {

namespace {

std::optional<int64_t> parse_integer(const std::string& text) {
  int64_t value = 0;
  const char* begin = text.data() + (text.size() > 1 && text[0] == '+' ? 1 : 0);
  const auto [end, error] = std::from_chars(begin, text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> parse_number(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(value)) return std::nullopt;
  return value;
}

// A check that `accepts` the parsed value, saying "must be <what>, got <text>" otherwise.
template <class Parse, class Accepts>
CLI::Validator make_check(const std::string& what, Parse parse, Accepts accepts) {
  return CLI::Validator(
      [what, parse, accepts](std::string& text) -> std::string {
        const auto value = parse(text);
        if (value && accepts(*value)) return "";
        return "must be " + what + ", got " + (text.empty() ? std::string("nothing") : text);
      },
      what);
}

CLI::Validator integer_check(const std::string& what, std::function<bool(int64_t)> accepts) {
  return make_check(what, parse_integer, accepts);
}

CLI::Validator number_check(const std::string& what, std::function<bool(double)> accepts) {
  return make_check(what, parse_number, accepts);
}

}  // namespace

CLI::Validator positive_integer() {
  return integer_check("a positive integer", [](int64_t value) { return value > 0; });
}

CLI::Validator non_negative_integer() {
  return integer_check("an integer >= 0", [](int64_t value) { return value >= 0; });
}

CLI::Validator integer_in(int64_t low, int64_t high) {
  return integer_check("an integer from " + std::to_string(low) + " to " + std::to_string(high),
                       [low, high](int64_t value) { return value >= low && value <= high; });
}

CLI::Validator positive_number() {
  return number_check("a number > 0", [](double value) { return value > 0; });
}

CLI::Validator non_negative_number() {
  return number_check("a number >= 0", [](double value) { return value >= 0; });
}

CLI::Validator fraction_below_one() {
  return number_check("a number in [0, 1)", [](double value) { return value >= 0 && value < 1; });
}

CLI::Validator fraction_up_to_one() {
  return number_check("a number in (0, 1]", [](double value) { return value > 0 && value <= 1; });
}

void check_numbers_are_numbers(CLI::App& app) {
  for (CLI::Option* option : app.get_options()) {
    // The type name is "INT", "UINT" or "FLOAT", followed by ":<description>" for
    // every check the flag has; a flag with a check of its own keeps it alone.
    const std::string type = option->get_type_name();
    CLI::Validator is_number;
    if (type == "INT") is_number = integer_check("an integer", [](int64_t) { return true; });
    else if (type == "UINT") is_number = integer_check("an integer >= 0", [](int64_t value) { return value >= 0; });
    else if (type == "FLOAT") is_number = number_check("a number", [](double) { return true; });
    else continue;
    option->check(is_number.description(""));
  }
  for (CLI::App* subcommand : app.get_subcommands([](CLI::App*) { return true; })) check_numbers_are_numbers(*subcommand);
}

}  // namespace tg::cli
