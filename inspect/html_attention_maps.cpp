#include "tinygpt/inspect/html_attention_maps.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "tinygpt/inspect/html_text.h"
#include "tinygpt/inspect/svg.h"
#include "tinygpt/tensor/factory.h"

namespace tg::inspect {

namespace {

constexpr int64_t kFewestPositions = 8;  // the plan never shows fewer (a prompt shorter than this: all)

// "120,000": big counts are read on the page.
std::string grouped_digits(int64_t value) {
  const std::string digits = std::to_string(value);
  std::string grouped;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) grouped += ',';
    grouped += digits[i];
  }
  return grouped;
}

// The largest P with P^2 x heatmaps <= kHeatmapCells.
int64_t affordable_positions(int64_t heatmaps) {
  return static_cast<int64_t>(std::sqrt(static_cast<double>(kHeatmapCells / std::max<int64_t>(heatmaps, 1))));
}

// The top-left (n, n) corner of a (T, T) attention map; for the weights, the
// keys after each query (weight exactly 0, masked) become NaN, drawn grey.
Tensor heatmap_grid(const Tensor& map, int64_t n, bool grey_future) {
  const int64_t time = map.size(1);
  const std::vector<float> values = map.to_vector<float>();
  std::vector<float> corner;
  for (int64_t query = 0; query < n; ++query)
    for (int64_t key = 0; key < n; ++key)
      corner.push_back(grey_future && key > query ? NAN : values[static_cast<size_t>(query * time + key)]);
  return from_vector(corner, {n, n});
}

// The first `count` tokens as heatmap labels.
std::vector<std::string> token_labels(const Walkthrough& walkthrough, int64_t count) {
  std::vector<std::string> labels;
  for (int64_t i = 0; i < count; ++i) labels.push_back(shown_token(walkthrough.tokens[static_cast<size_t>(i)].text));
  return labels;
}

// The smallest and largest finite value of all `grids`.
std::pair<double, double> finite_range(const std::vector<Tensor>& grids) {
  double smallest = INFINITY, largest = -INFINITY;
  for (const Tensor& grid : grids)
    for (double value : grid.to_vector<double>())
      if (std::isfinite(value)) {
        smallest = std::min(smallest, value);
        largest = std::max(largest, value);
      }
  return {smallest, largest};
}

std::string scale_note(const std::optional<std::pair<double, double>>& range) {
  return "<p class=\"scale\">Colour scale: " +
         (range ? "one for all heads, from " + number(range->first, 3) + " to " + number(range->second, 3) +
                      " (equal colours, equal values)"
                : std::string("each head its own, from its smallest to its largest value (its colour bar); "
                              "<code>--shared-scale</code> gives all heads one")) +
         ". Hover a cell for its exact value.</p>";
}

}  // namespace

HeatmapPlan plan_heatmaps(const Walkthrough& walkthrough) {
  HeatmapPlan plan;
  plan.time = static_cast<int64_t>(walkthrough.tokens.size());
  for (const Stage& stage : walkthrough.stages) {
    if (stage.view != StageView::Attention) continue;
    plan.heatmaps += static_cast<int64_t>(stage.tensors.size());
    plan.heads = std::max(plan.heads, static_cast<int64_t>(stage.tensors.size()));
    if (stage.id.ends_with(".weights")) ++plan.blocks;
  }
  plan.positions = std::min(plan.time, std::max(kFewestPositions, affordable_positions(plan.heatmaps)));
  return plan;
}

std::string heatmap_cut_note(const HeatmapPlan& plan) {
  if (plan.positions >= plan.time) return "";
  const int64_t stages = plan.heatmaps / std::max<int64_t>(plan.blocks * plan.heads, 1);  // scores, mask, weights
  std::string note = "<p class=\"cut\">The heatmaps show the first " + std::to_string(plan.positions) + " of the " +
                     std::to_string(plan.time) + " positions: the page draws at most " +
                     grouped_digits(kHeatmapCells) + " heatmap cells (each carries its value, to keep the page to "
                     "about 10 MB), and its " + std::to_string(plan.heatmaps) + " heatmaps at all " +
                     std::to_string(plan.time) + " positions would need " +
                     grouped_digits(plan.heatmaps * plan.time * plan.time) + ". ";
  const int64_t block_cells = stages * plan.heads * plan.time * plan.time;
  if (plan.blocks > 1 && block_cells <= kHeatmapCells)
    return note + "<code>--layer N</code> draws one block's heads at all " + std::to_string(plan.time) +
           " positions.</p>";
  if (plan.heads > 1 && stages * plan.time * plan.time <= kHeatmapCells)
    return note + "<code>--layer N --head H</code> draws one head at all " + std::to_string(plan.time) +
           " positions.</p>";
  return note + "One head of one block (<code>--layer N --head H</code>) shows the first " +
         std::to_string(std::min(plan.time, affordable_positions(stages))) +
         "; <code>tinygpt serve</code>'s live page draws every position.</p>";
}

std::string attention_heatmaps(const Walkthrough& walkthrough, const Stage& stage, const HeatmapPlan& plan,
                               bool shared_scale) {
  const bool weights = stage.id.ends_with(".weights");
  std::vector<Tensor> grids;  // (n, n) per head
  for (const ShownTensor& shown : stage.tensors)
    grids.push_back(heatmap_grid(shown.value, std::min(shown.value.size(0), plan.positions), weights));
  std::optional<std::pair<double, double>> range;
  if (weights) range = std::pair{0.0, 1.0};
  else if (shared_scale && !grids.empty()) range = finite_range(grids);
  std::string out = "<div class=\"heatmaps\">";
  for (size_t head = 0; head < grids.size(); ++head) {
    svg::HeatmapOptions options;
    options.title = stage.tensors[head].label;
    options.row_labels = options.column_labels = token_labels(walkthrough, grids[head].size(0));
    options.grid_size = 480;  // a short prompt: cells of 36 px, their values written in them; a long one: 8 px
    options.largest_cell = 36;
    options.cell_values = true;
    options.range = range;
    out += "<div class=\"scroll\">" + svg::heatmap(grids[head], options) + "</div>";
  }
  return out + "</div>\n" + scale_note(range) + heatmap_cut_note(plan);
}

}  // namespace tg::inspect
