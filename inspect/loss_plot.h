// Pictures of a training run: the metrics file `tinygpt train` writes
// (DIR/metrics.jsonl, or --log FILE; JSON Lines, documented in
// training/train_log.h) read back and drawn as one SVG:
// the loss of every step (faint), the evaluations' train and val loss (bold, with
// markers) on a log-ish axis, and the learning rate (dashed) on a second axis.
#pragma once
#include <cstdint>
#include <istream>
#include <string>
#include <vector>

namespace tg::inspect {

struct StepMetrics {
  int64_t iter = 0;
  double train_loss = 0, lr = 0;
};

struct EvalMetrics {
  int64_t iter = 0;
  double train_loss = 0, val_loss = 0, lr = 0;
};

struct TrainingMetrics {
  std::vector<StepMetrics> steps;  // by iteration; a resumed run's repeated iterations: the later line wins
  std::vector<EvalMetrics> evals;  // likewise
};

// Throws tg::Error naming `source` (and the 1-based line) for a line that is not
// a JSON object, a missing or non-numeric field, or a file without any step or
// evaluation line. Blank lines are skipped, and so is a last line cut short (no
// newline, not JSON: a write a crash or a full disk interrupted); fields not
// needed here are ignored.
TrainingMetrics parse_metrics(std::istream& lines, const std::string& source);
TrainingMetrics read_metrics(const std::string& path);  // also throws if the file cannot be read

// The SVG file (standalone, with its namespace), titled with `run_name` and the
// last evaluation's val loss (or the last step's loss when there is no evaluation).
std::string render_loss_plot(const TrainingMetrics& metrics, const std::string& run_name);

}  // namespace tg::inspect
