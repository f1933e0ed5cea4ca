// The histogram of inspect/svg.h: bars of the finite values and their statistics.
#include <algorithm>
#include <cmath>

#include "tinygpt/inspect/svg_canvas.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect::svg {

std::string histogram(std::span<const double> values, const HistogramOptions& options) {
  check(options.bins > 0, "svg::histogram: bins must be positive, got ", options.bins);
  std::vector<double> finite;
  for (double value : values)
    if (std::isfinite(value)) finite.push_back(value);
  const size_t masked = values.size() - finite.size();

  constexpr double width = 440, height = 226;
  constexpr double left = 52, right = 12, top = 26, bottom = 78;
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
  out += text_at((left + width - right) / 2, y(0) + 31, options.x_label, "text-anchor=\"middle\" fill=\"#555\"");
  out += "<text transform=\"translate(12," + px((top + y(0)) / 2) + ") rotate(-90)\" text-anchor=\"middle\" fill=\"#555\">" +
         escape(options.y_label) + "</text>";
  out += line_between(x(mean), top, x(mean), y(0), "stroke=\"#d62728\" stroke-dasharray=\"4 3\"");
  out += text_at(left, height - 24,
                 "n " + std::to_string(finite.size()) + "  mean " + number(mean, 4) + "  std " + number(deviation, 4));
  out += text_at(left, height - 8,
                 "min " + number(smallest, 4) + "  max " + number(largest, 4) +
                     (masked ? "  (" + std::to_string(masked) + " masked, not counted)" : ""));
  return out + "</svg>";
}

}  // namespace tg::inspect::svg
