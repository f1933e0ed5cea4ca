// --config-file FILE: a command's flags from a TOML file, read with CLI11's own
// TOML reader. Each key is a flag's name without the dashes (`min-lr` or
// nanoGPT's `min_lr`); a flag also given on the command line keeps that value.
//
//   # run.toml
//   config = "baby"
//   iters = 5000
//   lr = 1e-3
//   checkpoint-activations = true
//
// CLI11 reads config files for the top-level app only, so a subcommand applies
// its own here, before it runs.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace tg::cli {

// Registers --config-file on `command`, its path stored in `path`.
void add_config_file_option(CLI::App& command, std::string& path);

// Gives every flag the file names and the command line did not its value from the file.
// A key that is no flag, or a value a flag refuses, is a usage error naming the file.
void apply_config_file(CLI::App& command, const std::string& path);

}  // namespace tg::cli
