#include "tinygpt/inspect/svg_canvas.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "tinygpt/tensor/error.h"

namespace tg::inspect::svg {

std::string px(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  std::string result = text;
  if (result.size() > 2 && result.compare(result.size() - 2, 2, ".0") == 0) result.resize(result.size() - 2);
  return result == "-0" ? "0" : result;
}

size_t character_count(std::string_view text) {
  return static_cast<size_t>(std::count_if(text.begin(), text.end(), [](char byte) { return (byte & 0xC0) != 0x80; }));
}

std::string open_svg(double width, double height) {
  return "<svg class=\"picture\" width=\"" + px(width) + "\" height=\"" + px(height) + "\" viewBox=\"0 0 " + px(width) +
         " " + px(height) + "\" font-family=\"monospace\" font-size=\"11\">";
}

std::string text_at(double x, double y, std::string_view content, const std::string& attributes) {
  return "<text x=\"" + px(x) + "\" y=\"" + px(y) + "\"" + (attributes.empty() ? "" : " " + attributes) + ">" +
         escape(content) + "</text>";
}

std::string line_between(double x1, double y1, double x2, double y2, const std::string& attributes) {
  return "<line x1=\"" + px(x1) + "\" y1=\"" + px(y1) + "\" x2=\"" + px(x2) + "\" y2=\"" + px(y2) + "\" " + attributes +
         "/>";
}

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

}  // namespace tg::inspect::svg
