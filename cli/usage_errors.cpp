#include "cli/usage_errors.h"

#include <algorithm>

namespace tg::cli {

namespace {

// Levenshtein distance: insertions, deletions and substitutions of one character.
size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<size_t> previous(b.size() + 1), current(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) previous[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    current[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      current[j] = std::min({previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(previous, current);
  }
  return previous[b.size()];
}

std::vector<std::string> subcommand_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::App* subcommand : app.get_subcommands([](const CLI::App*) { return true; }))
    names.push_back(subcommand->get_name());
  return names;
}

std::vector<std::string> flag_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* option : app.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back("--" + name);
  return names;
}

std::string did_you_mean(const std::string& suggestion, const char* quote) {
  return suggestion.empty() ? "" : std::string("; did you mean ") + quote + suggestion + quote + "?";
}

// The subcommand the parse reached, or `app` itself.
const CLI::App& reached(const CLI::App& app) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  return parsed.empty() ? app : *parsed.front();
}

// nanoGPT's names for the flags people bring from it (its configurator's --max_iters=...).
constexpr std::pair<const char*, const char*> kNanoGptNames[] = {
    {"--max_iters", "--iters"},          {"--learning_rate", "--lr"},     {"--lr_decay_iters", "--decay-iters"},
    {"--warmup_iters", "--warmup"},      {"--n_layer", "--layers"},       {"--n_head", "--heads"},
    {"--n_embd", "--dims"},              {"--gradient_accumulation_steps", "--grad-accum"},
    {"--out_dir", "--out"},              {"--dataset", "--data"},         {"--max_new_tokens", "--tokens"},
    {"--start", "--prompt"},
};

// The flag of `command` that nanoGPT's (or a snake_case) spelling `flag` means, or "".
std::string flag_under_other_name(const std::string& flag, const std::vector<std::string>& flags) {
  const auto has = [&](const std::string& name) { return std::find(flags.begin(), flags.end(), name) != flags.end(); };
  for (const auto& [theirs, ours] : kNanoGptNames)
    if (flag == theirs && has(ours)) return ours;
  std::string dashed = flag;
  std::replace(dashed.begin() + 2, dashed.end(), '_', '-');
  return dashed != flag && has(dashed) ? dashed : "";
}

// "--tokns 5" left over: name the first unknown flag, else the first stray word.
std::string unexpected_words_message(const CLI::App& command) {
  const std::vector<std::string> words = command.remaining();
  for (const std::string& word : words) {
    if (word.rfind("--", 0) != 0) continue;
    const std::string flag = word.substr(0, word.find('='));
    const std::vector<std::string> flags = flag_names(command);
    if (const std::string ours = flag_under_other_name(flag, flags); !ours.empty())
      return "unknown flag " + flag + "; tinygpt calls it " + ours;
    return "unknown flag " + flag + did_you_mean(closest_name(flag, flags), "");
  }
  return words.empty() ? "unexpected arguments" : "unexpected argument '" + words.front() + "'";
}

}  // namespace

std::string closest_name(const std::string& word, const std::vector<std::string>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, word.size() / 3) + 1;  // farther than this is not a typo
  for (const std::string& candidate : candidates) {
    const size_t distance = edit_distance(word, candidate);
    if (distance < best_distance) {
      best = candidate;
      best_distance = distance;
    }
  }
  return best;
}

std::string unknown_command_message(const CLI::App& app, int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') return "";
  const std::string word = argv[1];
  const std::vector<std::string> names = subcommand_names(app);
  if (std::find(names.begin(), names.end(), word) != names.end()) return "";
  return "unknown command '" + word + "'" + did_you_mean(closest_name(word, names), "'") +
         " (tinygpt --help lists them)";
}

std::string usage_error_message(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App& command = reached(app);
  const bool in_subcommand = &command != &app;
  const std::string where = in_subcommand ? command.get_name() + ": " : "";
  const std::string help = in_subcommand ? "tinygpt " + command.get_name() + " --help" : "tinygpt --help";
  std::string what = error.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&error)) {
    what = unexpected_words_message(command);
  } else if (dynamic_cast<const CLI::ArgumentMismatch*>(&error) && what.find(" required ") != std::string::npos &&
             what.rfind("--", 0) == 0) {
    // CLI11's "--prompt: 1 required TEXT missing": the flag came last, without its value.
    what = what.substr(0, what.find(':')) + " needs a value after it";
  } else if (dynamic_cast<const CLI::ValidationError*>(&error)) {
    // "--tokens: must be ..." from our checks (cli/flag_checks.h) reads "--tokens must be ...".
    const size_t colon = what.find(": ");
    if (colon != std::string::npos && what.rfind("--", 0) == 0 && colon < what.find(' ')) what.erase(colon, 1);
  }
  return where + what + " (see " + help + ")";
}

}  // namespace tg::cli
