// The bar chart of inspect/svg.h: a few named values as horizontal bars.
#include <algorithm>
#include <cmath>

#include "tinygpt/inspect/svg_canvas.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect::svg {

std::string bar_chart(const std::vector<std::string>& labels, std::span<const double> values,
                      const BarChartOptions& options) {
  check(labels.size() == values.size(), "svg::bar_chart: ", labels.size(), " labels for ", values.size(), " values");
  double largest = options.largest;
  for (double value : values) {
    check(std::isfinite(value) && value >= 0, "svg::bar_chart: the value ", value, " is negative or not finite");
    largest = std::max(largest, value);
  }
  if (largest == 0) largest = 1;  // all zero: an axis all the same

  size_t widest = 0;
  for (const std::string& label : labels) widest = std::max(widest, character_count(label));
  constexpr double bar_height = 18, gap = 4, top = 26, bottom = 40, right = 56, bars_width = 280;
  const double left = 8 + static_cast<double>(widest) * kCharWidth + 8;
  const double width = std::max(left + bars_width + right, 8 + kCharWidth * character_count(options.title));
  const double bars_bottom = top + static_cast<double>(values.size()) * (bar_height + gap);
  const double height = bars_bottom + bottom;
  const AxisMap x{0, largest, Scale::Linear, left, left + bars_width};

  std::string out = open_svg(width, height);
  out += text_at(8, 15, options.title, "font-weight=\"bold\"");
  for (double tick : nice_ticks(0, largest, 5)) {
    out += line_between(x(tick), top, x(tick), bars_bottom, "stroke=\"" + std::string(kGridColour) + "\"");
    out += text_at(x(tick), bars_bottom + 14, number(tick, 3), "text-anchor=\"middle\"");
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const double y = top + static_cast<double>(i) * (bar_height + gap);
    out += text_at(left - 6, y + bar_height * 0.7, labels[i], "text-anchor=\"end\"");
    out += "<rect x=\"" + px(left) + "\" y=\"" + px(y) + "\" width=\"" + px(x(values[i]) - left) + "\" height=\"" +
           px(bar_height) + "\" fill=\"#6baed6\"/>";
    out += text_at(x(values[i]) + 4, y + bar_height * 0.7, number(values[i], 3));
  }
  out += line_between(left, top, left, bars_bottom, "stroke=\"" + std::string(kAxisColour) + "\"");
  out += text_at(left + bars_width / 2, height - 8, options.value_label, "text-anchor=\"middle\" fill=\"#555\"");
  return out + "</svg>";
}

}  // namespace tg::inspect::svg
