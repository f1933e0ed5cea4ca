// tinygpt plot: a training run's metrics file as a picture.
//
//   tinygpt plot --metrics runs/shakespeare-char/metrics.jsonl --out loss.svg
//   tinygpt plot --metrics runs/shakespeare-char --out loss.svg    (a run folder: its metrics.jsonl)
//
// The SVG shows the train loss of every step, the evaluations' train and val
// loss and the learning rate against the iteration (inspect/loss_plot.h).
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/output_paths.h"
#include "tinygpt/inspect/loss_plot.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/error.h"

namespace tg::cli {

namespace {

struct PlotArguments {
  std::string metrics;
  std::string out;
};

void run_plot(const PlotArguments& arguments) {
  std::filesystem::path metrics_path = arguments.metrics;
  if (std::filesystem::is_directory(metrics_path)) metrics_path /= "metrics.jsonl";
  // The run's folder names the run (runs/shakespeare-char/metrics.jsonl: "shakespeare-char").
  const std::filesystem::path folder = std::filesystem::absolute(metrics_path).parent_path();
  const std::string run_name = folder.has_filename() ? folder.filename().string() : metrics_path.stem().string();
  check_output_is_no_input("--out", arguments.out, {{"--metrics", metrics_path}});

  inspect::TrainingMetrics metrics;
  try {
    metrics = inspect::read_metrics(metrics_path.string());
  } catch (const Error& error) {
    fail("plot: ", error.what());
  }
  const std::string picture = inspect::render_loss_plot(metrics, run_name);
  write_file_atomically(arguments.out, picture, "plot: --out");
  std::cerr << "plot: " << metrics.steps.size() << " steps and " << metrics.evals.size() << " evaluations from "
            << metrics_path.string() << " -> " << arguments.out << "\n";
}

}  // namespace

void add_plot_command(CLI::App& app) {
  auto arguments = std::make_shared<PlotArguments>();
  CLI::App* command = app.add_subcommand("plot", "Draw a training run's loss and learning rate as an SVG picture");
  command
      ->add_option("--metrics", arguments->metrics,
                   "The metrics file `tinygpt train` wrote (JSON Lines), or its run folder")
      ->required();
  command->add_option("--out", arguments->out, "The SVG file to write")->required();
  command->callback([arguments] { run_plot(*arguments); });
}

}  // namespace tg::cli
