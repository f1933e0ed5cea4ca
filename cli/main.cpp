// tinygpt: train, sample, tokenize, ... Every subcommand has --help.
// Errors end the program with one readable line on stderr and exit code 1.
#include <exception>
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  CLI::App app{"tinygpt: a from-scratch tensor and autograd engine with a GPT on top"};
  app.require_subcommand(1);
  app.set_help_all_flag("--help-all", "Show help for every subcommand");
  tg::cli::add_demo_command(app);
  tg::cli::add_tokenize_command(app);
  tg::cli::add_bpe_train_command(app);
  tg::cli::add_train_command(app);
  tg::cli::add_sample_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    return app.exit(error);
  } catch (const std::exception& error) {
    std::cerr << "tinygpt: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
