// Small SVG pictures shared by the walk-through's web page (inspect/html_report.h)
// and the training plot (inspect/loss_plot.h): a heatmap, a histogram and a line
// chart, and a bar chart. Each returns one <svg> element as text, without an xmlns attribute so
// it can sit inside an HTML page (the HTML parser knows <svg>); standalone()
// turns one into an .svg file of its own. One file each: svg_heatmap.cpp,
// svg_histogram.cpp, svg_line_chart.cpp, svg_bar_chart.cpp, drawn with the helpers of
// svg_canvas.h; svg_canvas.cpp also holds escape, nice_ticks and standalone.
//
// All text that reaches the output (titles, token labels) is escaped, and the
// output depends only on the arguments (no ids, no clocks, fixed number
// formats), so the same data always gives the same bytes. Elements carry no ids
// either: many pictures share one page, and ids would collide.
#pragma once
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tinygpt/inspect/format.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::inspect::svg {

// `text` made safe inside XML or HTML content and attribute values: & < > " '.
std::string escape(std::string_view text);

// Round tick values (1, 2 or 5 times a power of ten apart) inside [low, high],
// about `count` of them; the whole range is covered by at least two ticks when
// low < high.
std::vector<double> nice_ticks(double low, double high, int count = 5);

// `svg` (one element from this file) with the SVG namespace and an XML
// declaration, to be written to an .svg file of its own.
std::string standalone(const std::string& svg);

// --- heatmap -------------------------------------------------------------------

struct HeatmapOptions {
  std::string title;
  std::vector<std::string> row_labels;     // one per row, left of the grid (attention: queries)
  std::vector<std::string> column_labels;  // one per column, above it (attention: keys)
  std::string row_axis = "query";
  std::string column_axis = "key";
  double grid_size = 300;                          // the grid's longer side in pixels (cells stay between 8 px
  double largest_cell = 28;                        // and largest_cell)
  // Each finite cell's value: always a <title> tooltip with the exact float32 value ("query 3, key 1:
  // 0.25000003", the shortest decimal that reads back as it), and written inside the cell as the
  // terminal report prints it (4 decimals) when the cell is wide enough to read it.
  bool cell_values = false;
  std::optional<std::pair<double, double>> range;  // the colour scale's ends (weights: 0 to 1); by
                                                   // default the smallest and largest finite value
};

// One square cell per value of `grid` (R, C), coloured on a light-to-dark scale
// (options.range), with a colour bar. Non-finite
// values (a masked -inf) are drawn as grey "masked" cells. Cells are unit squares
// scaled into place, one path per colour, n neighbours in a row of the same
// colour drawn as the segment "h{n}v1h-{n}z": compact for a page with hundreds
// of heatmaps (options.cell_values adds an element per cell, about 55 bytes).
// Throws tg::Error if `grid` is not 2-D or a label list has the wrong length.
std::string heatmap(const Tensor& grid, const HeatmapOptions& options);

// --- histogram -----------------------------------------------------------------

struct HistogramOptions {
  std::string title;
  int bins = 40;
  std::string x_label = "value";  // the axis titles
  std::string y_label = "count";
};

// Bars counting the finite `values` in `bins` equal bins between their smallest
// and largest, with titled axes, a dashed line at the mean, and a caption with the count, mean,
// standard deviation (population), min and max; non-finite values are counted
// in the caption as "masked" and left out of the bars.
std::string histogram(std::span<const double> values, const HistogramOptions& options);

// --- bar chart -----------------------------------------------------------------

struct BarChartOptions {
  std::string title;
  std::string value_label;  // the value axis' title: "probability"
  double largest = 0;       // the value axis' end; 0: the largest value
};

// One horizontal bar per value, top to bottom, its label on the left and its
// value at its end, over a titled value axis from 0. For a few named values
// (the most likely next tokens). Throws tg::Error if `labels` and `values`
// differ in length or a value is negative or not finite.
std::string bar_chart(const std::vector<std::string>& labels, std::span<const double> values,
                      const BarChartOptions& options);

// --- line chart ----------------------------------------------------------------

enum class Scale {
  Linear,
  Log,  // log-ish: the values are placed logarithmically; ticks are powers of ten (1, 2, 5 steps)
        // over a decade or more, round linear values over a narrower range. Needs positive values.
};

enum class LineStyle {
  Faint,   // thin and translucent: many noisy points (the loss of every step)
  Bold,    // thick with a marker at every point: few important points (evaluations)
  Dashed,  // thin and dashed: a quantity on the secondary axis (the learning rate)
  Points,  // small dots, no line: samples on a curve (GELU's inputs)
};

enum class YAxis { Left, Right };

struct Series {
  std::string name;                    // in the legend
  std::vector<double> x = {}, y = {};  // the points, in drawing order
  std::string colour;                  // "#1f77b4"
  LineStyle style = LineStyle::Bold;
  YAxis axis = YAxis::Left;
};

struct LineChartOptions {
  std::string title, x_label, left_label, right_label;
  Scale left_scale = Scale::Linear;
  Scale right_scale = Scale::Linear;
  // The x axis covers at least [x_from, x_to] when x_from < x_to (a run of 0 or
  // 1 steps still gets an axis of whole iterations); else the points' range.
  double x_from = 0, x_to = 0;
  int width = 900, height = 480;  // the chart's; the legend adds its rows below (16 px each)
};

// The series against a shared x axis, each on its y axis (the right one is
// drawn only if a series uses it), with a grid at the left axis' ticks and a
// legend (<g class="legend">) below the x axis' title, where it hides no point.
// Throws tg::Error if a series has x and y of different lengths, no series has
// a point, or a Log axis gets a value <= 0.
std::string line_chart(const std::vector<Series>& series, const LineChartOptions& options);

}  // namespace tg::inspect::svg
