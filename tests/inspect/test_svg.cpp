// The SVG building blocks: escaping, number formats, ticks, and pictures that are
// well formed, deterministic and count what they should.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "tinygpt/inspect/svg.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/factory.h"
#include "tests/inspect/picture_checks.h"

using namespace tg;
using namespace tg::inspect;
using namespace tg::testing;

namespace {

const std::string kHostile = "<script>alert('x')</script>&\"";
const double kInf = std::numeric_limits<double>::infinity();

void check_ticks(const std::vector<double>& ticks, const std::vector<double>& expected) {
  REQUIRE(ticks.size() == expected.size());
  for (size_t i = 0; i < ticks.size(); ++i) CHECK(ticks[i] == doctest::Approx(expected[i]).epsilon(1e-12));
}

}  // namespace

TEST_CASE("svg::escape: the five characters that end text or an attribute") {
  CHECK(svg::escape("<a href='x'>&\"") == "&lt;a href=&#39;x&#39;&gt;&amp;&quot;");
  CHECK(svg::escape("plain café") == "plain café");
}

TEST_CASE("number: few digits, no trailing zeros") {
  CHECK(number(0.25) == "0.25");
  CHECK(number(1.5e-05) == "1.5e-05");
  CHECK(number(1200) == "1200");
  CHECK(number(2.0 / 3.0, 3) == "0.667");
  CHECK(number(-0.0) == "0");
  CHECK(number(-kInf) == "-inf");
  CHECK(number(std::nan("")) == "nan");
}

TEST_CASE("svg::nice_ticks: 1, 2 or 5 times a power of ten, inside the range") {
  check_ticks(svg::nice_ticks(0, 1, 5), {0, 0.2, 0.4, 0.6, 0.8, 1});
  check_ticks(svg::nice_ticks(-3, 7, 5), {-2, 0, 2, 4, 6});
  check_ticks(svg::nice_ticks(0.95, 1.05, 5), {0.96, 0.98, 1, 1.02, 1.04});
  check_ticks(svg::nice_ticks(0, 2000, 8), {0, 200, 400, 600, 800, 1000, 1200, 1400, 1600, 1800, 2000});
  check_ticks(svg::nice_ticks(2, 2), {2});
  CHECK(number(svg::nice_ticks(0, 0.3, 3)[3]) == "0.3");  // multiples, not sums: no 0.30000000000000004
  CHECK_THROWS_WITH_AS(svg::nice_ticks(1, 0), doctest::Contains("svg::nice_ticks: bad range [1, 0]"), Error);
}

TEST_CASE("svg::heatmap: one unit cell per value, masked cells grey, labels escaped") {
  const Tensor grid = from_vector<float>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  svg::HeatmapOptions options;
  options.title = "head 0";
  options.row_labels = {"a", kHostile, "c"};
  options.column_labels = {"w", "x", "y", "z"};
  const std::string picture = svg::heatmap(grid, options);
  CHECK(markup_problem(picture) == "");
  CHECK(heatmap_cells(picture) == 12);
  CHECK(picture.find(kHostile) == std::string::npos);
  CHECK(picture.find(">&lt;script&gt;al~</text>") != std::string::npos);  // cut to 10 characters, then escaped
  CHECK(picture.find("grey: masked") == std::string::npos);
  CHECK(picture.find(">11</text>") != std::string::npos);  // the colour bar's ends: the largest ...
  CHECK(picture.find(">0</text>") != std::string::npos);   // ... and the smallest value
  CHECK(picture == svg::heatmap(grid, options));           // deterministic

  const Tensor masked = from_vector<float>({1, -INFINITY, 0.5f, 0.5f}, {2, 2});
  svg::HeatmapOptions weights;
  weights.title = "weights";
  const std::string causal = svg::heatmap(masked, weights);
  CHECK(markup_problem(causal) == "");
  CHECK(heatmap_cells(causal) == 4);
  CHECK(causal.find("grey: masked") != std::string::npos);
  CHECK(causal.find("fill=\"#d4d4d4\" d=\"M1 0h1v1h-1z\"") != std::string::npos);  // the one masked cell

  // Cells of one colour: neighbours in a row merged into a run, each run placed relative to the last.
  const std::string runs = svg::heatmap(from_vector<float>({0, 0, 0, 1, 1, 1}, {2, 3}), {});
  CHECK(runs.find("d=\"M0 0h3v1h-3z\"") != std::string::npos);
  CHECK(runs.find("d=\"M0 1h3v1h-3z\"") != std::string::npos);
  const std::string scattered = svg::heatmap(from_vector<float>({0, 1, 0, 1, 0, 1}, {2, 3}), {});
  CHECK(scattered.find("d=\"M0 0h1v1h-1zm2 0h1v1h-1zm-1 1h1v1h-1z\"") != std::string::npos);
  CHECK(heatmap_cells(scattered) == 6);

  svg::HeatmapOptions fixed;
  fixed.range = std::pair{0.0, 10.0};  // 11 is beyond it: drawn in the darkest colour
  const std::string ranged = svg::heatmap(grid, fixed);
  CHECK(heatmap_cells(ranged) == 12);
  CHECK(ranged.find(">10</text>") != std::string::npos);
  CHECK(ranged.find(">11</text>") == std::string::npos);

  CHECK_THROWS_WITH_AS(svg::heatmap(from_vector<float>({1, 2}), options),
                       doctest::Contains("svg::heatmap: expected a 2-D (rows, columns) tensor"), Error);
  options.row_labels.pop_back();
  CHECK_THROWS_WITH_AS(svg::heatmap(grid, options), doctest::Contains("svg::heatmap: 2 row labels for 3 rows"), Error);
}

TEST_CASE("svg::histogram: bars of the finite values, their statistics, the masked ones counted apart") {
  const std::vector<double> values = {1, 2, 2, 3, -kInf};
  const std::string picture = svg::histogram(values, svg::HistogramOptions{"values <of> x", 3});
  CHECK(markup_problem(picture) == "");
  CHECK(occurrences(picture, "<rect ") == 3);
  CHECK(picture.find("1 to 1.667: 1</title>") != std::string::npos);
  CHECK(picture.find("1.667 to 2.333: 2</title>") != std::string::npos);
  CHECK(picture.find("2.333 to 3: 1</title>") != std::string::npos);
  CHECK(picture.find("n 4  mean 2  std 0.7071") != std::string::npos);
  CHECK(picture.find("min 1  max 3  (1 masked, not counted)") != std::string::npos);
  CHECK(picture.find("values &lt;of&gt; x") != std::string::npos);

  const std::vector<double> constant = {5, 5};
  CHECK(svg::histogram(constant, {}).find("n 2  mean 5  std 0") != std::string::npos);
  const std::vector<double> masked = {-kInf};
  CHECK(svg::histogram(masked, {}).find("no finite values (1 masked)") != std::string::npos);
  CHECK_THROWS_WITH_AS(svg::histogram(values, svg::HistogramOptions{"", 0}), doctest::Contains("svg::histogram: bins"),
                       Error);
}

TEST_CASE("svg::line_chart: a line per series, markers on the bold ones, a legend, two axes") {
  std::vector<svg::Series> series = {
      {.name = "loss", .x = {0, 1, 2, 3}, .y = {4, 3, 2.5, 2.2}, .colour = "#1f77b4", .style = svg::LineStyle::Faint},
      {.name = "val <loss>", .x = {0, 3}, .y = {4.1, 2.4}, .colour = "#ff7f0e"},
      {.name = "lr",
       .x = {0, 1, 2, 3},
       .y = {0, 1e-3, 1e-3, 5e-4},
       .colour = "#2ca02c",
       .style = svg::LineStyle::Dashed,
       .axis = svg::YAxis::Right},
  };
  svg::LineChartOptions options{.title = "run & co", .x_label = "iteration", .left_label = "loss", .right_label = "lr"};
  options.left_scale = svg::Scale::Log;
  const std::string picture = svg::line_chart(series, options);
  CHECK(markup_problem(picture) == "");
  CHECK(occurrences(picture, "<polyline ") == 3);
  CHECK(occurrences(picture, "<circle ") == 2);
  CHECK(picture.find("val &lt;loss&gt;: 2.4 at iteration 3</title>") != std::string::npos);
  CHECK(picture.find("run &amp; co") != std::string::npos);
  CHECK(picture.find(">0.001</text>") != std::string::npos);  // a tick of the right axis
  CHECK(picture == svg::line_chart(series, options));

  const std::string file = svg::standalone(picture);
  CHECK(file.starts_with("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "));
  CHECK(markup_problem(file) == "");

  series[0].y[3] = 0;
  CHECK_THROWS_WITH_AS(svg::line_chart(series, options),
                       doctest::Contains("svg::line_chart: series 'loss' has the value 0 on a log axis"), Error);
  series[0].y.pop_back();
  CHECK_THROWS_WITH_AS(svg::line_chart(series, options), doctest::Contains("series 'loss' has 4 x and 3 y values"),
                       Error);
  CHECK_THROWS_WITH_AS(svg::line_chart({}, options), doctest::Contains("svg::line_chart: no series has a point"),
                       Error);
}

TEST_CASE("svg::histogram: titled axes, the value below and the count up the side") {
  const std::vector<double> values = {1, 2, 2, 3};
  const std::string picture = svg::histogram(values, {.title = "t", .x_label = "weight <w>", .y_label = "count"});
  CHECK(markup_problem(picture) == "");
  CHECK(picture.find(">weight &lt;w&gt;</text>") != std::string::npos);
  CHECK(picture.find("rotate(-90)\" text-anchor=\"middle\" fill=\"#555\">count</text>") != std::string::npos);
  const std::string defaults = svg::histogram(values, {});
  CHECK(defaults.find(">value</text>") != std::string::npos);
  CHECK(defaults.find(">count</text>") != std::string::npos);
}

TEST_CASE("svg::bar_chart: one labelled bar per value, its value printed, a titled axis from 0") {
  const std::vector<double> values = {0.5, 0.25, 0};
  const std::string picture =
      svg::bar_chart({"a", "\u2423", "<b>"}, values, {.title = "top", .value_label = "probability"});
  CHECK(markup_problem(picture) == "");
  CHECK(occurrences(picture, "<rect ") == 3);
  for (const char* part : {">a</text>", ">\u2423</text>", ">&lt;b&gt;</text>", ">0.5</text>", ">0.25</text>",
                           ">probability</text>", ">top</text>"})
    CHECK(picture.find(part) != std::string::npos);
  CHECK(picture.find("width=\"0\" height=\"18\"") != std::string::npos);  // the 0 bar is empty
  CHECK_THROWS_WITH_AS(svg::bar_chart({"a"}, values, {}), doctest::Contains("svg::bar_chart: 1 labels for 3"), Error);
  const std::vector<double> negative = {-1};
  CHECK_THROWS_WITH_AS(svg::bar_chart({"a"}, negative, {}), doctest::Contains("negative"), Error);
}
