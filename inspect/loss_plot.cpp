#include "tinygpt/inspect/loss_plot.h"

#include <algorithm>

#include "tinygpt/inspect/svg.h"

namespace tg::inspect {

namespace {

constexpr const char* kTrainColour = "#1f77b4";
constexpr const char* kValColour = "#ff7f0e";
constexpr const char* kLearningRateColour = "#2ca02c";

// A chart of more points than its width in pixels shows nothing more, and a long run's log made
// a picture of hundreds of megabytes: past kMostPointsPerLine, each run of steps becomes its
// lowest and its highest point, so spikes stay visible.
constexpr size_t kMostPointsPerLine = 4000;

// `series` with the points (iter, value(point)) of `points`, thinned; read straight from the
// metrics, so a log of millions of steps is never copied whole.
template <class Point, class Value>
svg::Series thinned(svg::Series series, const std::deque<Point>& points, const Value& value) {
  const size_t count = points.size();
  const auto add = [&](size_t i) {
    series.x.push_back(static_cast<double>(points[i].iter));
    series.y.push_back(value(points[i]));
  };
  if (count <= kMostPointsPerLine) {
    for (size_t i = 0; i < count; ++i) add(i);
    return series;
  }
  const size_t buckets = kMostPointsPerLine / 2;
  for (size_t bucket = 0; bucket < buckets; ++bucket) {
    const size_t begin = bucket * count / buckets, end = (bucket + 1) * count / buckets;
    size_t lowest = begin, highest = begin;
    for (size_t i = begin; i < end; ++i) {
      if (value(points[i]) < value(points[lowest])) lowest = i;
      if (value(points[i]) > value(points[highest])) highest = i;
    }
    add(std::min(lowest, highest));
    add(std::max(lowest, highest));
  }
  return series;
}

}  // namespace

std::string render_loss_plot(const TrainingMetrics& metrics, const std::string& run_name) {
  const auto train_loss = [](const auto& point) { return point.train_loss; };
  svg::Series step_loss = thinned({.name = "train loss (every step)", .colour = kTrainColour,
                                   .style = svg::LineStyle::Faint},
                                  metrics.steps, train_loss);
  svg::Series learning_rate = thinned({.name = "learning rate", .colour = kLearningRateColour,
                                       .style = svg::LineStyle::Dashed, .axis = svg::YAxis::Right},
                                      metrics.steps, [](const StepMetrics& step) { return step.lr; });
  svg::Series eval_train = thinned({.name = "train loss (evaluation)", .colour = kTrainColour}, metrics.evals,
                                   train_loss);
  svg::Series eval_val = thinned({.name = "val loss (evaluation)", .colour = kValColour}, metrics.evals,
                                 [](const EvalMetrics& eval) { return eval.val_loss; });

  std::vector<svg::Series> series;
  bool positive_losses = true;  // over the thinned points, which keep each run's lowest
  for (svg::Series* one : {&step_loss, &eval_train, &eval_val, &learning_rate}) {
    if (one->x.empty()) continue;
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
