// Pictures of a training run: its metrics file (read back by
// inspect/metrics_file.h) drawn as one SVG: the loss of every step (faint), the
// evaluations' train and val loss (bold, with markers) on a log-ish axis, and
// the learning rate (dashed) on a second axis.
#pragma once
#include <string>

#include "tinygpt/inspect/metrics_file.h"

namespace tg::inspect {

// The SVG file (standalone, with its namespace), titled with `run_name` and the
// last evaluation's val loss (or the last step's loss when there is no evaluation).
// A line of more than 4,000 points is thinned to the lowest and highest point of
// each run of points, so spikes stay visible and the file stays small.
std::string render_loss_plot(const TrainingMetrics& metrics, const std::string& run_name);

}  // namespace tg::inspect
