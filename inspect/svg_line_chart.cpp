// The line chart of inspect/svg.h: series against a shared x axis, on a left
// and an optional right y axis, with a legend below it.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "tinygpt/inspect/svg_canvas.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect::svg {

namespace {

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

std::string stroke_of(const Series& series) {
  const std::string colour = "stroke=\"" + escape(series.colour) + "\"";
  switch (series.style) {
    case LineStyle::Faint:
      return colour + " stroke-width=\"1\" stroke-opacity=\"0.35\"";
    case LineStyle::Bold:
      return colour + " stroke-width=\"2.5\"";
    case LineStyle::Dashed:
      return colour + " stroke-width=\"1.2\" stroke-dasharray=\"5 3\"";
    case LineStyle::Points:
      return "";
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

// Where each legend entry goes: side by side under the chart, a new row when
// the next would pass the right edge. Below the x axis' title, outside the plot,
// the legend can hide no point of any series.
struct LegendLayout {
  std::vector<std::pair<double, double>> places;  // (left, baseline) of each entry
  double height = 0;                               // of all its rows
};

constexpr double kLegendRow = 16;

LegendLayout legend_layout(const std::vector<Series>& series, double width, double top) {
  LegendLayout layout;
  double x = 70, y = top + 12;
  for (const Series& one : series) {
    const double entry_width = 34 + kCharWidth * static_cast<double>(character_count(one.name)) + 18;
    if (x > 70 && x + entry_width > width - 8) {
      x = 70;
      y += kLegendRow;
    }
    layout.places.emplace_back(x, y);
    x += entry_width;
  }
  layout.height = series.empty() ? 0 : y + 6 - top;
  return layout;
}

std::string legend(const std::vector<Series>& series, const LegendLayout& layout) {
  std::string out = "<g class=\"legend\">";
  for (size_t i = 0; i < series.size(); ++i) {
    const auto [x, y] = layout.places[i];
    // A faint line's sample is drawn a little stronger, or it would not show at this size.
    const std::string stroke =
        series[i].style == LineStyle::Faint
            ? "stroke=\"" + escape(series[i].colour) + "\" stroke-width=\"1.5\" stroke-opacity=\"0.5\""
            : stroke_of(series[i]);
    if (series[i].style == LineStyle::Points)
      out += "<circle cx=\"" + px(x + 14) + "\" cy=\"" + px(y - 4) + "\" r=\"3\" fill=\"" + escape(series[i].colour) +
             "\"/>";
    else
      out += line_between(x, y - 4, x + 28, y - 4, stroke);
    out += text_at(x + 34, y, series[i].name);
  }
  return out + "</g>";
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

  // options.height is the chart's; the legend's rows go below it.
  const double width = options.width, height = options.height;
  const LegendLayout legend_places = legend_layout(series, width, height);
  const double left = 70, right = any_right ? 76 : 24, top = 40, bottom = 52;
  if (options.x_from < options.x_to) {
    x_smallest = std::min(x_smallest, options.x_from);
    x_largest = std::max(x_largest, options.x_to);
  }
  const auto [x_low, x_high] =
      x_smallest < x_largest ? std::pair{x_smallest, x_largest} : padded_range(x_smallest, x_largest, Scale::Linear);
  const AxisMap x{x_low, x_high, Scale::Linear, left, width - right};
  const std::optional<AxisMap> left_axis = y_axis_for(series, YAxis::Left, options.left_scale, height - bottom, top);
  const std::optional<AxisMap> right_axis = y_axis_for(series, YAxis::Right, options.right_scale, height - bottom, top);

  std::string out = open_svg(width, height + legend_places.height);
  out += "<rect width=\"" + px(width) + "\" height=\"" + px(height + legend_places.height) + "\" fill=\"#fff\"/>";
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
    if (one.style == LineStyle::Points) {
      out += "<g fill=\"" + escape(one.colour) + "\" fill-opacity=\"0.6\">";
      for (size_t i = 0; i < one.x.size(); ++i)
        out += "<circle cx=\"" + px(x(one.x[i])) + "\" cy=\"" + px(y(one.y[i])) + "\" r=\"2\"/>";
      out += "</g>";
      continue;
    }
    out += "<polyline fill=\"none\" " + stroke_of(one) + " points=\"" + points + "\"/>";
    if (one.style != LineStyle::Bold) continue;
    for (size_t i = 0; i < one.x.size(); ++i)
      out += "<circle cx=\"" + px(x(one.x[i])) + "\" cy=\"" + px(y(one.y[i])) + "\" r=\"3.5\" fill=\"" +
             escape(one.colour) + "\"><title>" + escape(one.name) + ": " + number(one.y[i], 5) + " at " +
             escape(options.x_label) + " " + number(one.x[i], 8) + "</title></circle>";
  }

  out += legend(series, legend_places);
  return out + "</svg>";
}

}  // namespace tg::inspect::svg
