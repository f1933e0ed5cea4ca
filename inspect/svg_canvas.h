// The drawing helpers the pictures of inspect/svg.h share: pixel numbers, text
// and lines, the width of a monospace character (to size labels without a
// font), and the map from data values to pixels along an axis. Only inspect/svg_*.cpp include
// this file; everything else goes through inspect/svg.h.
#pragma once
#include <cmath>
#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

#include "tinygpt/inspect/svg.h"

namespace tg::inspect::svg {

inline constexpr double kCharWidth = 6.6;  // of an 11 px monospace character: to size labels without a font
inline constexpr const char* kAxisColour = "#444";
inline constexpr const char* kGridColour = "#e6e6e6";

// A pixel coordinate with one decimal at most: "12", "12.5".
std::string px(double value);

// The UTF-8 code points in `text`.
size_t character_count(std::string_view text);

// The opening <svg> tag of a width x height picture (monospace, 11 px).
std::string open_svg(double width, double height);

// <text> at (x, y); `attributes` (already escaped) go inside the tag.
std::string text_at(double x, double y, std::string_view content, const std::string& attributes = "");

std::string line_between(double x1, double y1, double x2, double y2, const std::string& attributes);

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

// The range an axis shows for data in [smallest, largest]: a little margin, never empty.
std::pair<double, double> padded_range(double smallest, double largest, Scale scale);

}  // namespace tg::inspect::svg
