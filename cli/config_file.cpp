#include "cli/config_file.h"

#include <algorithm>
#include <filesystem>

#include "cli/usage_errors.h"

namespace tg::cli {

void add_config_file_option(CLI::App& command, std::string& path) {
  command.add_option("--config-file", path,
                     "Read flags from a TOML file (`name = value`, the flags' names without --); the command line "
                     "wins");
}

void apply_config_file(CLI::App& command, const std::string& path) {
  if (path.empty()) return;
  check_usage(std::filesystem::is_regular_file(path), "--config-file ", path, " is not a file");
  std::vector<CLI::ConfigItem> items;
  try {
    items = CLI::ConfigTOML().from_file(path);
  } catch (const CLI::Error& error) {
    check_usage(false, "--config-file ", path, " cannot be read as TOML: ", error.what());
  }
  std::vector<std::string> names;
  for (const CLI::Option* option : command.get_options())
    for (const std::string& name : option->get_lnames()) names.push_back(name);
  for (const CLI::ConfigItem& item : items) {
    std::string name = item.fullname();
    std::replace(name.begin(), name.end(), '_', '-');
    check_usage(name != "config-file", "--config-file ", path, " names another config file; one file holds them all");
    CLI::Option* option = std::find(names.begin(), names.end(), name) != names.end()
                              ? command.get_option_no_throw("--" + name)
                              : nullptr;
    if (!option) {
      const std::string suggestion = closest_name(name, names);
      check_usage(false, "--config-file ", path, ": '", item.fullname(), "' is not a flag of tinygpt ",
                  command.get_name(), suggestion.empty() ? "" : "; did you mean '" + suggestion + "'?");
    }
    if (option->count() > 0) continue;  // given on the command line
    try {
      option->add_result(item.inputs);
      option->run_callback();
    } catch (const CLI::Error& error) {
      check_usage(false, "--config-file ", path, ": ", error.what());
    }
  }
}

}  // namespace tg::cli
