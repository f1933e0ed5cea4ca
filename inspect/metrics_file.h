// A training run's metrics file read back: the JSON Lines `tinygpt train`
// writes (DIR/metrics.jsonl, or --log FILE; documented in training/train_log.h),
// as the points a loss plot draws (inspect/loss_plot.h).
//
// A log of millions of steps is read in one pass in bounded blocks (a line is at
// most 1 MB), each point kept as a compact struct in a list sorted by
// iteration. Most lines are flat objects of numbers that a small scanner reads
// (scan_flat_metrics_line); any other line goes to nlohmann::json, which also
// gives every error. Both produce the same MetricsLineFields, which are checked
// in one place, so the two paths cannot disagree on what a line means.
#pragma once
#include <cstdint>
#include <deque>
#include <istream>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace tg::inspect {

struct StepMetrics {
  int64_t iter = 0;
  double train_loss = 0, lr = 0;
};

struct EvalMetrics {
  int64_t iter = 0;
  double train_loss = 0, val_loss = 0, lr = 0;
};

// Each list is sorted by iteration, one point per iteration. A resumed run
// repeats iterations: a line whose iteration is not past the last one kept
// first drops every point from that iteration on (the run it belonged to was
// abandoned there), so the later line wins. Steps and evaluations are separate.
// A deque, not a vector: it grows a block at a time, where a vector's growth
// briefly holds the old and the new copy (1.5 times the memory, at the peak).
struct TrainingMetrics {
  std::deque<StepMetrics> steps;
  std::deque<EvalMetrics> evals;
};

// Throws tg::Error naming `source` (and the 1-based line) for a line that is not
// a JSON object, a missing or non-numeric field, an "eval" that is not true or
// false, a line longer than 1 MB, or a file without any step or evaluation line.
// Blank lines are skipped, and so is a last line cut short (no newline, not JSON:
// a write a crash or a full disk interrupted); fields not needed here are ignored.
TrainingMetrics parse_metrics(std::istream& lines, const std::string& source);
TrainingMetrics read_metrics(const std::string& path);  // also throws if the file cannot be read

// The fields of one line that a plot reads, as the line has them (before any check).
struct MetricsLineFields {
  enum class Kind : uint8_t { absent, number, boolean, other };
  struct Field {
    Kind kind = Kind::absent;
    double number = 0;     // Kind::number: the value as nlohmann's get<double>() gives it
    bool boolean = false;  // Kind::boolean
    bool operator==(const Field&) const = default;
  };
  Field iter, train_loss, val_loss, lr, eval;
  bool operator==(const MetricsLineFields&) const = default;
};

// The fast path: a line that is one flat JSON object, whose keys are plain ASCII
// and whose values are numbers, true, false, null or plain ASCII strings.
// nullopt for anything else (nested values, escapes, invalid JSON): that is no
// error, just a line for the clear path. Exposed for the tests that hold the two
// paths to the same answers.
std::optional<MetricsLineFields> scan_flat_metrics_line(std::string_view line);
// The clear path: the same fields from a parsed JSON object.
MetricsLineFields metrics_line_fields(const nlohmann::json& object);

}  // namespace tg::inspect
