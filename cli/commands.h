// The tinygpt command line: one binary, one subcommand per file in cli/.
// Each file exposes an add_*_command() that registers its subcommand, flags and
// the function that runs it.
#pragma once
#include <CLI/CLI.hpp>

namespace tg::cli {

void add_demo_command(CLI::App& app);
void add_tokenize_command(CLI::App& app);
void add_bpe_train_command(CLI::App& app);
void add_prepare_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_sample_command(CLI::App& app);
void add_chat_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_explain_command(CLI::App& app);
void add_plot_command(CLI::App& app);
void add_export_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_serve_command(CLI::App& app);

}  // namespace tg::cli
