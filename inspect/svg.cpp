#include "inspect/svg.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <tuple>

#include "tensor/error.h"

namespace tg::inspect::svg {

namespace {

constexpr double kCharWidth = 6.6;       // of an 11 px monospace character: to size labels without a font
constexpr size_t kLabelCharacters = 10;  // longer labels are cut, ending in "~"
constexpr int kColourLevels = 24;        // heatmap colours are quantised: one <path> per level
constexpr const char* kMaskedColour = "#d4d4d4";
constexpr const char* kAxisColour = "#444";
constexpr const char* kGridColour = "#e6e6e6";

// A pixel coordinate with one decimal at most: "12", "12.5".
std::string px(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  std::string result = text;
  if (result.size() > 2 && result.compare(result.size() - 2, 2, ".0") == 0) result.resize(result.size() - 2);
  return result == "-0" ? "0" : result;
}

size_t character_count(std::string_view text) {  // UTF-8 code points
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char byte) { return (byte & 0xC0) != 0x80; }));
}

// `text` cut to kLabelCharacters characters (never inside a UTF-8 character), "~" marking a cut.
std::string clipped(const std::string& text) {
  std::string result;
  size_t characters = 0;
  for (char byte : text) {
    if ((byte & 0xC0) != 0x80 && ++characters > kLabelCharacters) return result + "~";
    result += byte;
  }
  return result;
}

double label_width(const std::vector<std::string>& labels) {
  size_t widest = 0;
  for (const std::string& label : labels) widest = std::max(widest, character_count(clipped(label)));
  return static_cast<double>(widest) * kCharWidth;
}

std::string open_svg(double width, double height) {
  return "<svg class=\"picture\" width=\"" + px(width) + "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) +
         " " + px(height) + "\" font-family=\"monospace\" font-size=\"11\">";
}

// <text> at (x, y); `attributes` (already escaped) go inside the tag.
std::string text_at(double x, double y, std::string_view content, const std::string& attributes = "") {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"" + (attributes.empty() ? "" : " " + attributes) + ">" +
         escape(content) + "</text>";
}

std::string line_between(double x1, double y1, double x2, double y2, const std::string& attributes) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\" " + attributes +
         "/>";
}

std::string hex_colour(double red, double green, double blue) {
  char text[8];
  std::snprintf(text, sizeof text, "#%02x%02x%02x", static_cast<int>(std::lround(red)),
                static_cast<int>(std::lround(green)), static_cast<int>(std::lround(blue)));
  return text;
}

// The heatmap's scale at t in [0, 1]: near-white through mid blue to dark navy.
std::string scale_colour(double t) {
  constexpr double anchors[3][3] = {{247, 251, 255}, {107, 174, 214}, {8, 48, 107}};
  const double position = std::clamp(t, 0.0, 1.0) * 2;
  const int lower = std::min(static_cast<int>(position), 1);
  const double fraction = position - lower;
  double rgb[3];
  for (int channel = 0; channel < 3; ++channel)
    rgb[channel] = anchors[lower][channel] + fraction * (anchors[lower + 1][channel] - anchors[lower][channel]);
  return hex_colour(rgb[0], rgb[1], rgb[2]);
}

// The cells of one colour as one path, compact for a page of many heatmaps:
// cells side by side in a row become one run, drawn "h{n}v1h-{n}z" (n cells),
// and each run starts with a move relative to the previous run's corner.
class CellPath {
 public:
  void add(int64_t column, int64_t row) {
    if (run_length_ > 0 && row == run_row_ && column == run_column_ + run_length_) {
      ++run_length_;
      return;
    }
    flush();
    run_column_ = column;
    run_row_ = row;
    run_length_ = 1;
  }

  // The path data, the last run included.
  const std::string& d() {
    flush();
    return d_;
  }

 private:
  void flush() {
    if (run_length_ == 0) return;
    const std::string length = std::to_string(run_length_);
    d_.append(d_.empty() ? "M" : "m");
    d_.append(std::to_string(run_column_ - corner_column_)).append(" ").append(std::to_string(run_row_ - corner_row_));
    d_.append("h").append(length).append("v1h-").append(length).append("z");  // after z: back at the corner
    corner_column_ = run_column_;
    corner_row_ = run_row_;
    run_length_ = 0;
  }

  std::string d_;
  int64_t corner_column_ = 0, corner_row_ = 0;             // where the last written run starts
  int64_t run_column_ = 0, run_row_ = 0, run_length_ = 0;  // the run being collected
};

// Maps data values on one axis to pixels; `pixel_low` is where `low` lands.
struct AxisMap {
  double low, high;
  Scale scale;
  double pixel_low, pixel_high;

  double operator()(double value) const {
    const double fraction =
        scale == Scale::Log ? std::log(value / low) / std::log(high / low) : (value - low) / (high - low);
    return pixel_low + fraction * (pixel_high - pixel_low);
  }
};

// Log-ish ticks: 1-2-5 per decade over a decade or more (only the powers of ten
// when that is too many), round linear values over a narrower range.
std::vector<double> log_ticks(double low, double high, int count) {
  if (high / low < 10) return nice_ticks(low, high, count);
  std::vector<double> ticks, powers;
  for (int exponent = static_cast<int>(std::floor(std::log10(low))); exponent <= std::ceil(std::log10(high));
       ++exponent)
    for (double mantissa : {1.0, 2.0, 5.0}) {
      const double value = mantissa * std::pow(10.0, exponent);
      if (value < low * (1 - 1e-9) || value > high * (1 + 1e-9)) continue;
      ticks.push_back(value);
      if (mantissa == 1.0) powers.push_back(value);
    }
  return ticks.size() > static_cast<size_t>(2 * count) && powers.size() >= 2 ? powers : ticks;
}

std::vector<double> ticks_for(const AxisMap& axis, int count) {
  return axis.scale == Scale::Log ? log_ticks(axis.low, axis.high, count) : nice_ticks(axis.low, axis.high, count);
}

// The range an axis shows for data in [smallest, largest]: a little margin, never empty.
std::pair<double, double> padded_range(double smallest, double largest, Scale scale) {
  if (scale == Scale::Log) {
    if (smallest == largest) return {smallest / 1.5, largest * 1.5};
    return {smallest / 1.04, largest * 1.04};
  }
  if (smallest == largest) {
    const double half = smallest == 0 ? 1 : std::abs(smallest) * 0.1;
    return {smallest - half, largest + half};
  }
  const double margin = (largest - smallest) * 0.04;
  return {smallest - margin, largest + margin};
}

}  // namespace

std::string escape(std::string_view text) {
  std::string result;
  result.reserve(text.size());
  for (char character : text) {
    switch (character) {
      case '&':
        result += "&amp;";
        break;
      case '<':
        result += "&lt;";
        break;
      case '>':
        result += "&gt;";
        break;
      case '"':
        result += "&quot;";
        break;
      case '\'':
        result += "&#39;";
        break;
      default:
        result += character;
    }
  }
  return result;
}


std::vector<double> nice_ticks(double low, double high, int count) {
  check(std::isfinite(low) && std::isfinite(high) && low <= high && count > 0, "svg::nice_ticks: bad range [", low,
        ", ", high, "] or count ", count);
  if (low == high) return {low};
  const double rough_step = (high - low) / count;
  const double magnitude = std::pow(10.0, std::floor(std::log10(rough_step)));
  const double residual = rough_step / magnitude;
  const double step = magnitude * (residual < 1.5 ? 1 : residual < 3 ? 2 : residual < 7 ? 5 : 10);
  std::vector<double> ticks;
  // Multiples of `step` computed one by one (not accumulated), so 0.1 * 3 stays 0.3 to print.
  for (double index = std::ceil(low / step - 1e-9); index * step <= high + step * 1e-9; ++index)
    ticks.push_back(std::abs(index) < 1e-9 ? 0.0 : index * step);
  return ticks;
}

std::string standalone(const std::string& svg) {
  check(svg.rfind("<svg ", 0) == 0, "svg::standalone: the text does not start with <svg");
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" " + svg.substr(5) +
         "\n";
}

// --- heatmap -------------------------------------------------------------------

std::string heatmap(const Tensor& grid, const HeatmapOptions& options) {
  check(grid.dim() == 2, "svg::heatmap: expected a 2-D (rows, columns) tensor, got shape ", grid.shape());
  const int64_t rows = grid.size(0), columns = grid.size(1);
  check(options.row_labels.empty() || static_cast<int64_t>(options.row_labels.size()) == rows,
        "svg::heatmap: ", options.row_labels.size(), " row labels for ", rows, " rows");
  check(options.column_labels.empty() || static_cast<int64_t>(options.column_labels.size()) == columns,
        "svg::heatmap: ", options.column_labels.size(), " column labels for ", columns, " columns");
  const std::vector<double> values = grid.to_vector<double>();

  double smallest = std::numeric_limits<double>::infinity(), largest = -smallest;
  bool any_masked = false;
  for (double value : values) {
    if (!std::isfinite(value)) {
      any_masked = true;
      continue;
    }
    smallest = std::min(smallest, value);
    largest = std::max(largest, value);
  }
  if (options.range) std::tie(smallest, largest) = *options.range;
  const bool any_finite = smallest <= largest;

  // Layout: title, slanted column labels, then row labels | grid | colour bar.
  const double cell =
      std::clamp(std::round(options.grid_size / static_cast<double>(std::max<int64_t>({rows, columns, 1}))), 8.0, 28.0);
  const double label_font = std::clamp(cell - 1, 7.0, 11.0);
  const double label_scale = label_font / 11;
  const double left = 8 + label_width(options.row_labels) * label_scale + 6;
  const double top = 22 + label_width(options.column_labels) * label_scale * 0.82 + 10;
  const double grid_width = cell * static_cast<double>(columns), grid_height = cell * static_cast<double>(rows);
  const double bar_left = left + grid_width + 14, bar_height = std::max(grid_height, 80.0);
  const double width = std::max(bar_left + 10 + 6 + 8 * kCharWidth, 8 + kCharWidth * character_count(options.title));
  const double height = top + bar_height + 24;

  std::string out = open_svg(width, height);
  out += text_at(8, 15, options.title, "font-weight=\"bold\"");
  out += "<g font-size=\"" + px(label_font) + "\">";
  for (int64_t column = 0; column < static_cast<int64_t>(options.column_labels.size()); ++column) {
    const double x = left + (static_cast<double>(column) + 0.5) * cell + label_font * 0.3;
    out += "<text transform=\"translate(" + px(x) + "," + px(top - 4) + ") rotate(-55)\">" +
           escape(clipped(options.column_labels[column])) + "</text>";
  }
  out += "</g><g font-size=\"" + px(label_font) + "\" text-anchor=\"end\">";
  for (int64_t row = 0; row < static_cast<int64_t>(options.row_labels.size()); ++row)
    out += text_at(left - 4, top + (static_cast<double>(row) + 0.5) * cell + label_font * 0.35,
                   clipped(options.row_labels[row]));
  out += "</g>";

  // The cells: unit squares in a scaled group, one path per colour level (the
  // last one grey, for the masked cells).
  std::vector<CellPath> paths(kColourLevels + 1);
  for (int64_t row = 0; row < rows; ++row)
    for (int64_t column = 0; column < columns; ++column) {
      const double value = values[static_cast<size_t>(row * columns + column)];
      int level = kColourLevels;
      if (std::isfinite(value)) {
        const double t = largest > smallest ? (value - smallest) / (largest - smallest) : 0.5;
        // Clamped: a fixed options.range need not hold every value.
        level = std::clamp(static_cast<int>(std::floor(t * kColourLevels)), 0, kColourLevels - 1);
      }
      paths[static_cast<size_t>(level)].add(column, row);
    }
  out += "<g transform=\"translate(" + px(left) + "," + px(top) + ") scale(" + px(cell) +
         ")\" shape-rendering=\"crispEdges\">";
  for (int level = 0; level <= kColourLevels; ++level) {
    const std::string& d = paths[static_cast<size_t>(level)].d();
    if (d.empty()) continue;
    const std::string fill = level == kColourLevels ? kMaskedColour : scale_colour((level + 0.5) / kColourLevels);
    out += "<path fill=\"" + fill + "\" d=\"" + d + "\"/>";
  }
  out += "</g>";
  out += "<rect x=\"" + px(left) + "\" y=\"" + px(top) + "\" width=\"" + px(grid_width) + "\" height=\"" +
         px(grid_height) + "\" fill=\"none\" stroke=\"" + kAxisColour + "\" stroke-width=\"0.5\"/>";

  // The colour bar: the same levels, the largest value on top, unit rectangles scaled into place.
  out += "<g transform=\"translate(" + px(bar_left) + "," + px(top) + ") scale(10," +
         number(bar_height / kColourLevels, 5) + ")\" shape-rendering=\"crispEdges\">";
  for (int level = 0; level < kColourLevels; ++level)
    out += "<rect y=\"" + std::to_string(kColourLevels - 1 - level) + "\" width=\"1\" height=\"1\" fill=\"" +
           scale_colour((level + 0.5) / kColourLevels) + "\"/>";
  out += "</g>";
  if (any_finite) {
    out += text_at(bar_left + 14, top + 8, number(largest, 3));
    out += text_at(bar_left + 14, top + bar_height, number(smallest, 3));
  }
  std::string caption = "rows: " + options.row_axis + ", columns: " + options.column_axis;
  if (any_masked) caption += ", grey: masked";
  out += text_at(8, height - 6, caption, "fill=\"#555\"");
  return out + "</svg>";
}

// --- histogram -----------------------------------------------------------------

std::string histogram(std::span<const double> values, const HistogramOptions& options) {
  check(options.bins > 0, "svg::histogram: bins must be positive, got ", options.bins);
  std::vector<double> finite;
  for (double value : values)
    if (std::isfinite(value)) finite.push_back(value);
  const size_t masked = values.size() - finite.size();

  constexpr double width = 440, height = 210;
  constexpr double left = 52, right = 12, top = 26, bottom = 62;
  std::string out = open_svg(width, height);
  out += text_at(8, 15, options.title, "font-weight=\"bold\"");
  if (finite.empty()) {
    out += text_at(left, top + 40, "no finite values" + (masked ? " (" + std::to_string(masked) + " masked)" : ""));
    return out + "</svg>";
  }

  const auto [smallest_it, largest_it] = std::minmax_element(finite.begin(), finite.end());
  const double smallest = *smallest_it, largest = *largest_it;
  double sum = 0;
  for (double value : finite) sum += value;
  const double mean = sum / static_cast<double>(finite.size());
  double squares = 0;
  for (double value : finite) squares += (value - mean) * (value - mean);
  const double deviation = std::sqrt(squares / static_cast<double>(finite.size()));

  const auto [low, high] =
      smallest < largest ? std::pair{smallest, largest} : padded_range(smallest, largest, Scale::Linear);
  std::vector<int64_t> counts(static_cast<size_t>(options.bins), 0);
  for (double value : finite) {
    const auto bin = static_cast<int64_t>((value - low) / (high - low) * options.bins);
    ++counts[static_cast<size_t>(std::clamp<int64_t>(bin, 0, options.bins - 1))];
  }
  const int64_t most = *std::max_element(counts.begin(), counts.end());

  const AxisMap x{low, high, Scale::Linear, left, width - right};
  const AxisMap y{0, static_cast<double>(most), Scale::Linear, height - bottom, top};
  for (double tick : nice_ticks(0, static_cast<double>(most), 4)) {
    if (tick != std::floor(tick)) continue;  // counts are whole
    out += line_between(left, y(tick), width - right, y(tick), "stroke=\"" + std::string(kGridColour) + "\"");
    out += text_at(left - 4, y(tick) + 4, number(tick, 6), "text-anchor=\"end\"");
  }
  const double bin_width = (high - low) / options.bins;
  out += "<g fill=\"#6baed6\" stroke=\"#fff\" stroke-width=\"0.5\">";
  for (int bin = 0; bin < options.bins; ++bin) {
    const int64_t count = counts[static_cast<size_t>(bin)];
    if (count == 0) continue;
    const double bin_low = low + bin * bin_width;
    out += "<rect x=\"" + px(x(bin_low)) + "\" y=\"" + px(y(static_cast<double>(count))) + "\" width=\"" +
           px(x(bin_low + bin_width) - x(bin_low)) + "\" height=\"" + px(y(0) - y(static_cast<double>(count))) +
           "\"><title>" + number(bin_low, 4) + " to " + number(bin_low + bin_width, 4) + ": " + std::to_string(count) +
           "</title></rect>";
  }
  out += "</g>";
  out += line_between(left, y(0), width - right, y(0), "stroke=\"" + std::string(kAxisColour) + "\"");
  for (double tick : nice_ticks(low, high, 5)) {
    out += line_between(x(tick), y(0), x(tick), y(0) + 4, "stroke=\"" + std::string(kAxisColour) + "\"");
    out += text_at(x(tick), y(0) + 16, number(tick, 3), "text-anchor=\"middle\"");
  }
  out += line_between(x(mean), top, x(mean), y(0), "stroke=\"#d62728\" stroke-dasharray=\"4 3\"");
  out += text_at(left, height - 24,
                 "n " + std::to_string(finite.size()) + "  mean " + number(mean, 4) + "  std " + number(deviation, 4));
  out += text_at(left, height - 8,
                 "min " + number(smallest, 4) + "  max " + number(largest, 4) +
                     (masked ? "  (" + std::to_string(masked) + " masked, not counted)" : ""));
  return out + "</svg>";
}

// --- line chart ----------------------------------------------------------------

namespace {

std::string stroke_of(const Series& series) {
  const std::string colour = "stroke=\"" + escape(series.colour) + "\"";
  switch (series.style) {
    case LineStyle::Faint:
      return colour + " stroke-width=\"1\" stroke-opacity=\"0.35\"";
    case LineStyle::Bold:
      return colour + " stroke-width=\"2.5\"";
    case LineStyle::Dashed:
      return colour + " stroke-width=\"1.2\" stroke-dasharray=\"5 3\"";
  }
  return colour;
}

// The axis a set of series is drawn against, or nothing when none uses it.
std::optional<AxisMap> y_axis_for(const std::vector<Series>& series, YAxis which, Scale scale, double pixel_low,
                                  double pixel_high) {
  double smallest = std::numeric_limits<double>::infinity(), largest = -smallest;
  for (const Series& one : series) {
    if (one.axis != which) continue;
    for (double value : one.y) {
      check(scale == Scale::Linear || value > 0, "svg::line_chart: series '", one.name, "' has the value ", value,
            " on a log axis");
      smallest = std::min(smallest, value);
      largest = std::max(largest, value);
    }
  }
  if (!(smallest <= largest)) return std::nullopt;
  const auto [low, high] = padded_range(smallest, largest, scale);
  return AxisMap{low, high, scale, pixel_low, pixel_high};
}

}  // namespace

std::string line_chart(const std::vector<Series>& series, const LineChartOptions& options) {
  double x_smallest = std::numeric_limits<double>::infinity(), x_largest = -x_smallest;
  bool any_right = false;
  for (const Series& one : series) {
    check(one.x.size() == one.y.size(), "svg::line_chart: series '", one.name, "' has ", one.x.size(), " x and ",
          one.y.size(), " y values");
    for (double value : one.x) {
      x_smallest = std::min(x_smallest, value);
      x_largest = std::max(x_largest, value);
    }
    any_right = any_right || (one.axis == YAxis::Right && !one.y.empty());
  }
  check(x_smallest <= x_largest, "svg::line_chart: no series has a point");

  const double width = options.width, height = options.height;
  const double left = 70, right = any_right ? 76 : 24, top = 40, bottom = 52;
  const auto [x_low, x_high] =
      x_smallest < x_largest ? std::pair{x_smallest, x_largest} : padded_range(x_smallest, x_largest, Scale::Linear);
  const AxisMap x{x_low, x_high, Scale::Linear, left, width - right};
  const std::optional<AxisMap> left_axis = y_axis_for(series, YAxis::Left, options.left_scale, height - bottom, top);
  const std::optional<AxisMap> right_axis = y_axis_for(series, YAxis::Right, options.right_scale, height - bottom, top);

  std::string out = open_svg(width, height);
  out += "<rect width=\"" + px(width) + "\" height=\"" + px(height) + "\" fill=\"#fff\"/>";
  out += text_at(width / 2, 22, options.title, "text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\"");
  const std::string axis_stroke = "stroke=\"" + std::string(kAxisColour) + "\"";

  // Grid and ticks: x below, the left axis with the grid, the right axis' ticks only.
  for (double tick : nice_ticks(x.low, x.high, 8)) {
    out += line_between(x(tick), top, x(tick), height - bottom, "stroke=\"" + std::string(kGridColour) + "\"");
    out += text_at(x(tick), height - bottom + 16, number(tick, 6), "text-anchor=\"middle\"");
  }
  if (left_axis) {
    for (double tick : ticks_for(*left_axis, 6)) {
      out += line_between(left, (*left_axis)(tick), width - right, (*left_axis)(tick),
                          "stroke=\"" + std::string(kGridColour) + "\"");
      out += text_at(left - 6, (*left_axis)(tick) + 4, number(tick, 4), "text-anchor=\"end\"");
    }
  }
  if (right_axis) {
    out += line_between(width - right, top, width - right, height - bottom, axis_stroke);
    for (double tick : ticks_for(*right_axis, 6)) {
      out += line_between(width - right, (*right_axis)(tick), width - right + 4, (*right_axis)(tick), axis_stroke);
      out += text_at(width - right + 6, (*right_axis)(tick) + 4, number(tick, 3));
    }
  }
  out += line_between(left, top, left, height - bottom, axis_stroke);
  out += line_between(left, height - bottom, width - right, height - bottom, axis_stroke);
  out += text_at((left + width - right) / 2, height - 12, options.x_label, "text-anchor=\"middle\"");
  out += "<text transform=\"translate(16," + px((top + height - bottom) / 2) +
         ") rotate(-90)\" text-anchor=\"middle\">" + escape(options.left_label) + "</text>";
  if (right_axis)
    out += "<text transform=\"translate(" + px(width - 10) + "," + px((top + height - bottom) / 2) +
           ") rotate(90)\" text-anchor=\"middle\">" + escape(options.right_label) + "</text>";

  // The lines, in the order given (later ones on top), markers with their values on hover.
  for (const Series& one : series) {
    if (one.x.empty()) continue;
    const AxisMap& y = one.axis == YAxis::Left ? *left_axis : *right_axis;
    std::string points;
    for (size_t i = 0; i < one.x.size(); ++i)
      points.append(i ? " " : "").append(px(x(one.x[i]))).append(",").append(px(y(one.y[i])));
    out += "<polyline fill=\"none\" " + stroke_of(one) + " points=\"" + points + "\"/>";
    if (one.style != LineStyle::Bold) continue;
    for (size_t i = 0; i < one.x.size(); ++i)
      out += "<circle cx=\"" + px(x(one.x[i])) + "\" cy=\"" + px(y(one.y[i])) + "\" r=\"3.5\" fill=\"" +
             escape(one.colour) + "\"><title>" + escape(one.name) + ": " + number(one.y[i], 5) + " at " +
             escape(options.x_label) + " " + number(one.x[i], 8) + "</title></circle>";
  }

  // The legend, top right inside the plot area.
  size_t widest = 0;
  for (const Series& one : series) widest = std::max(widest, character_count(one.name));
  const double legend_width = 40 + kCharWidth * static_cast<double>(widest);
  const double legend_left = width - right - legend_width - 10, legend_top = top + 8;
  out += "<rect x=\"" + px(legend_left) + "\" y=\"" + px(legend_top) + "\" width=\"" + px(legend_width) +
         "\" height=\"" + px(8 + 16 * static_cast<double>(series.size())) +
         "\" fill=\"#fff\" fill-opacity=\"0.85\" stroke=\"#ccc\"/>";
  for (size_t i = 0; i < series.size(); ++i) {
    const double row_y = legend_top + 14 + 16 * static_cast<double>(i);
    // A faint line's sample is drawn a little stronger, or it would not show at this size.
    const std::string stroke =
        series[i].style == LineStyle::Faint
            ? "stroke=\"" + escape(series[i].colour) + "\" stroke-width=\"1.5\" stroke-opacity=\"0.5\""
            : stroke_of(series[i]);
    out += line_between(legend_left + 6, row_y - 4, legend_left + 28, row_y - 4, stroke);
    out += text_at(legend_left + 34, row_y, series[i].name);
  }
  return out + "</svg>";
}

}  // namespace tg::inspect::svg
