// Usage errors (an unknown command or flag, a bad value): one line in our own
// words, the closest valid name when one was mistyped, and exit code 2.
//
//   tinygpt: error: unknown command 'sampel'; did you mean 'sample'? (tinygpt --help lists them)
//   tinygpt: error: sample: unknown flag --tokns; did you mean --tokens? (see tinygpt sample --help)
//   tinygpt: error: sample: --tokens must be a positive integer, got -5 (see tinygpt sample --help)
#pragma once
#include <CLI/CLI.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace tg::cli {

// Exit codes (README lists them): 0 success, 1 runtime error, 2 usage error.
inline constexpr int kRuntimeErrorExit = 1;
inline constexpr int kUsageErrorExit = 2;

// The candidate nearest to `word` in edit distance when it is near enough to be
// a typo of it, else "".
std::string closest_name(const std::string& word, const std::vector<std::string>& candidates);

// The message for a first word that is neither a subcommand nor a flag
// (`tinygpt sampel`), or "" when the first word is fine.
std::string unknown_command_message(const CLI::App& app, int argc, char** argv);

// The one line for a CLI11 parse error of `app` (the subcommand it reached is named).
std::string usage_error_message(const CLI::App& app, const CLI::ParseError& error);

// A usage error (exit code 2) unless `condition` holds: for flags that are fine
// one by one but not together ("--dims 32 is not divisible by --heads 3").
template <class... Parts>
void check_usage(bool condition, const Parts&... parts) {
  if (condition) return;
  std::ostringstream message;
  (message << ... << parts);
  throw CLI::ValidationError(message.str());
}

}  // namespace tg::cli
