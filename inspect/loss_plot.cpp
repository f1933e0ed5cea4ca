#include "tinygpt/inspect/loss_plot.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "tinygpt/inspect/svg.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect {

namespace {

constexpr const char* kTrainColour = "#1f77b4";
constexpr const char* kValColour = "#ff7f0e";
constexpr const char* kLearningRateColour = "#2ca02c";

// A line's field as a number, or an error naming the file, line and field.
// Losses and learning rates are far below this; a value past it (1e308) is no run's, and a
// chart's padded range around it would overflow to infinity.
constexpr double kLargestPlottedValue = 1e30;

double field(const nlohmann::json& line, const char* name, const std::string& where) {
  const auto found = line.find(name);
  check(found != line.end() && found->is_number(), where, ": no number \"", name, "\"");
  const double value = found->get<double>();
  check(std::abs(value) <= kLargestPlottedValue, where, ": \"", name, "\" is ", value,
        ", beyond any loss, learning rate or iteration a run logs");
  return value;
}

// A chart of more points than its width in pixels shows nothing more, and a long run's log made
// a picture of hundreds of megabytes: past kMostPointsPerLine, each run of steps becomes its
// lowest and its highest point, so spikes stay visible.
constexpr size_t kMostPointsPerLine = 4000;

void thin_out(svg::Series& series) {
  const size_t count = series.x.size();
  if (count <= kMostPointsPerLine) return;
  const size_t buckets = kMostPointsPerLine / 2;
  svg::Series thinned = series;
  thinned.x.clear();
  thinned.y.clear();
  for (size_t bucket = 0; bucket < buckets; ++bucket) {
    const size_t begin = bucket * count / buckets, end = (bucket + 1) * count / buckets;
    size_t lowest = begin, highest = begin;
    for (size_t i = begin; i < end; ++i) {
      if (series.y[i] < series.y[lowest]) lowest = i;
      if (series.y[i] > series.y[highest]) highest = i;
    }
    for (const size_t i : {std::min(lowest, highest), std::max(lowest, highest)}) {
      thinned.x.push_back(series.x[i]);
      thinned.y.push_back(series.y[i]);
    }
  }
  series = std::move(thinned);
}

template <class Point>
std::vector<Point> values_of(const std::map<int64_t, Point>& by_iter) {
  std::vector<Point> points;
  for (const auto& [iter, point] : by_iter) points.push_back(point);
  return points;
}

}  // namespace

TrainingMetrics parse_metrics(std::istream& lines, const std::string& source) {
  std::map<int64_t, StepMetrics> steps;  // keyed by iteration: a repeated one (a resumed run) is replaced
  std::map<int64_t, EvalMetrics> evals;
  std::string text;
  for (int64_t number = 1; std::getline(lines, text); ++number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "metrics '" + source + "' line " + std::to_string(number);
    const nlohmann::json line = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    // A last line without its newline that does not parse was cut short: the run was killed or ran out of disk
    // space while writing it, or is writing it now. train --resume drops it too (training/train_log.cpp).
    if (line.is_discarded() && lines.eof()) break;
    check(line.is_object(), where, ": not a JSON object: ", text.substr(0, 60));
    const auto iter = static_cast<int64_t>(field(line, "iter", where));
    if (line.value("eval", false)) {
      evals[iter] = {iter, field(line, "train_loss", where), field(line, "val_loss", where), line.value("lr", 0.0)};
    } else {
      steps[iter] = {iter, field(line, "train_loss", where), field(line, "lr", where)};
    }
  }
  check(!steps.empty() || !evals.empty(), "metrics '", source, "': no step or evaluation lines");
  return {values_of(steps), values_of(evals)};
}

TrainingMetrics read_metrics(const std::string& path) {
  std::ifstream file(path);
  check(file.good(), "metrics '", path, "': cannot open the file");
  return parse_metrics(file, path);
}

std::string render_loss_plot(const TrainingMetrics& metrics, const std::string& run_name) {
  svg::Series step_loss{.name = "train loss (every step)", .colour = kTrainColour, .style = svg::LineStyle::Faint};
  svg::Series learning_rate{.name = "learning rate",
                            .colour = kLearningRateColour,
                            .style = svg::LineStyle::Dashed,
                            .axis = svg::YAxis::Right};
  for (const StepMetrics& step : metrics.steps) {
    step_loss.x.push_back(static_cast<double>(step.iter));
    step_loss.y.push_back(step.train_loss);
    learning_rate.x.push_back(static_cast<double>(step.iter));
    learning_rate.y.push_back(step.lr);
  }
  svg::Series eval_train{.name = "train loss (evaluation)", .colour = kTrainColour};
  svg::Series eval_val{.name = "val loss (evaluation)", .colour = kValColour};
  for (const EvalMetrics& eval : metrics.evals) {
    eval_train.x.push_back(static_cast<double>(eval.iter));
    eval_train.y.push_back(eval.train_loss);
    eval_val.x.push_back(static_cast<double>(eval.iter));
    eval_val.y.push_back(eval.val_loss);
  }

  std::vector<svg::Series> series;
  bool positive_losses = true;
  for (svg::Series* one : {&step_loss, &eval_train, &eval_val, &learning_rate}) {
    if (one->x.empty()) continue;
    thin_out(*one);
    if (one->axis == svg::YAxis::Left)
      for (double loss : one->y) positive_losses = positive_losses && loss > 0;
    series.push_back(std::move(*one));
  }

  svg::LineChartOptions options;
  options.title = run_name + ": " +
                  (metrics.evals.empty() ? "train loss " + number(metrics.steps.back().train_loss) +
                                               " at iteration " + std::to_string(metrics.steps.back().iter)
                                         : "val loss " + number(metrics.evals.back().val_loss) + " at iteration " +
                                               std::to_string(metrics.evals.back().iter));
  options.x_label = "iteration";
  options.left_scale = positive_losses ? svg::Scale::Log : svg::Scale::Linear;  // a loss of 0 cannot go on a log axis
  options.left_label = positive_losses ? "loss (cross-entropy, nats; log scale)" : "loss (cross-entropy, nats)";
  options.right_label = "learning rate";
  // Iterations from 0, and at least 10 of them: a run of 0 or 1 steps gets whole-number ticks.
  const double last_iteration = metrics.steps.empty() ? 0 : static_cast<double>(metrics.steps.back().iter);
  options.x_from = 0;
  options.x_to = std::max({10.0, last_iteration, metrics.evals.empty() ? 0.0 : static_cast<double>(metrics.evals.back().iter)});
  return svg::standalone(svg::line_chart(series, options));
}

}  // namespace tg::inspect
