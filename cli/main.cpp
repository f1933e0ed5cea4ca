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
  tg::cli::add_eval_command(app);
  tg::cli::add_explain_command(app);
  tg::cli::add_plot_command(app);
  tg::cli::add_export_command(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& help) {
    return app.exit(help);
  } catch (const CLI::CallForAllHelp& help) {
    return app.exit(help);
  } catch (const CLI::ParseError& error) {
    // One line, like every other error (CLI11's exit() would add a second one).
    std::cerr << "tinygpt: error: " << error.what() << " (see tinygpt --help)\n";
    return error.get_exit_code() == 0 ? 2 : error.get_exit_code();
  } catch (const std::exception& error) {
    std::cerr << "tinygpt: error: " << error.what() << "\n";
    return 1;
  }
  return 0;
}
