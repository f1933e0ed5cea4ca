// The heatmap of inspect/svg.h: one square cell per value, one <path> per colour.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <tuple>

#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/svg_canvas.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect::svg {

namespace {

constexpr size_t kLabelCharacters = 10;  // longer labels are cut, ending in "~"
constexpr int kColourLevels = 24;        // heatmap colours are quantised: one <path> per level
constexpr const char* kMaskedColour = "#d4d4d4";

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

// The shortest decimal that reads back as the same float32: the value itself, "0.1" not "0.100000001".
std::string exact_value(double value) {
  char text[32];
  const auto result = std::to_chars(text, text + sizeof text, static_cast<float>(value));
  return std::string(text, result.ptr);
}


struct GridPlace {
  double left, top, cell;  // the grid's top-left corner and a cell's side, in pixels
};

// The printed value inside each finite cell when it is wide enough to read (a
// font of at least 7 px), light on the dark half of the scale; none reacts to the pointer.
std::string values_in_cells(const std::vector<double>& values, int64_t columns, const GridPlace& place,
                            double smallest, double largest) {
  std::string out = "<g text-anchor=\"middle\" pointer-events=\"none\">";
  const std::string open = out;
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    const std::string text = table_value(values[i]);
    const double font = std::min(10.0, (place.cell - 4) / (0.62 * static_cast<double>(text.size())));
    if (font < 7) continue;
    const double t = largest > smallest ? (values[i] - smallest) / (largest - smallest) : 0.5;
    const auto row = static_cast<double>(static_cast<int64_t>(i) / columns);
    const auto column = static_cast<double>(static_cast<int64_t>(i) % columns);
    out += text_at(place.left + (column + 0.5) * place.cell, place.top + (row + 0.5) * place.cell + font * 0.35, text,
                   "font-size=\"" + px(font) + "\" fill=\"" + (t > 0.55 ? "#fff" : "#222") + "\"");
  }
  return out.size() == open.size() ? "" : out + "</g>";
}

// An invisible square over each finite cell holding its exact value as a <title>, so hovering shows
// it. Drawn "v1h1v-1z", not as the colour runs "h{n}v1h-{n}z" are: those count the cells drawn.
std::string cell_tooltips(const std::vector<double>& values, int64_t columns, const GridPlace& place,
                          const HeatmapOptions& options) {
  std::string out = "<g fill-opacity=\"0\" transform=\"translate(" + px(place.left) + "," + px(place.top) +
                    ") scale(" + px(place.cell) + ")\">";
  const std::string row_axis = escape(options.row_axis), column_axis = escape(options.column_axis);
  for (size_t i = 0; i < values.size(); ++i) {
    if (!std::isfinite(values[i])) continue;
    const std::string row = std::to_string(static_cast<int64_t>(i) / columns);
    const std::string column = std::to_string(static_cast<int64_t>(i) % columns);
    out.append("<path d=\"M").append(column).append(" ").append(row).append("v1h1v-1z\"><title>");
    out.append(row_axis).append(" ").append(row).append(", ").append(column_axis).append(" ").append(column);
    out.append(": ").append(exact_value(values[i])).append("</title></path>");
  }
  return out + "</g>";
}

}  // namespace

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
      std::clamp(std::round(options.grid_size / static_cast<double>(std::max<int64_t>({rows, columns, 1}))), 8.0,
                 std::max(8.0, options.largest_cell));
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
  if (options.cell_values) {
    const GridPlace place{left, top, cell};
    out += values_in_cells(values, columns, place, smallest, largest);
    out += cell_tooltips(values, columns, place, options);
  }

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

}  // namespace tg::inspect::svg
