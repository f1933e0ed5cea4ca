#include "tinygpt/tensor/print.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <type_traits>
#include <vector>

namespace tg {

namespace {

constexpr int64_t kAbridgeAbove = 1000;  // elements; beyond this only the edges of each dim are shown
constexpr int64_t kEdgeItems = 3;        // shown at each end of an abridged dim
constexpr int64_t kLineWidth = 80;       // long rows wrap, as in PyTorch

// A dim is cut to its edges when the tensor is abridged and the dim is longer than both edges.
bool elided(int64_t size, bool abridged) { return abridged && size > 2 * kEdgeItems; }

std::vector<int64_t> shown_indices(int64_t size, bool abridged) {
  std::vector<int64_t> indices;
  for (int64_t i = 0; i < size; ++i)
    if (!elided(size, abridged) || i < kEdgeItems || i >= size - kEdgeItems) indices.push_back(i);
  return indices;
}

// Element offsets (from the data pointer) of the shown elements, in row-major order.
void collect_offsets(const Tensor& x, bool abridged, int64_t dim, int64_t offset, std::vector<int64_t>& offsets) {
  if (dim == x.dim()) {
    offsets.push_back(offset);
    return;
  }
  for (int64_t i : shown_indices(x.shape()[dim], abridged))
    collect_offsets(x, abridged, dim + 1, offset + i * x.strides()[dim], offsets);
}

std::string format_float(double value, bool scientific) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char text[32];
  std::snprintf(text, sizeof text, scientific ? "%.4e" : "%.4f", value);
  return text;
}

// One string per shown element. Floats share one notation: 4 decimals, or
// scientific when the values span too wide a range to read that way (PyTorch's rule).
std::vector<std::string> format_cells(const Tensor& x, const std::vector<int64_t>& offsets) {
  std::vector<std::string> cells;
  visit_any(x.dtype(), [&]<class T>() {
    const T* data = x.data<T>();
    if constexpr (std::is_same_v<T, bool>) {
      for (int64_t offset : offsets) cells.push_back(data[offset] ? "True" : "False");
    } else if constexpr (std::is_same_v<T, int64_t> || std::is_same_v<T, int8_t>) {
      for (int64_t offset : offsets) cells.push_back(std::to_string(data[offset]));
    } else {
      double largest = 0, smallest = INFINITY;  // over finite nonzero magnitudes
      bool all_integers = true;
      for (int64_t offset : offsets) {
        const double value = data[offset];
        if (!std::isfinite(value)) continue;
        all_integers = all_integers && value == std::nearbyint(value);
        if (value == 0) continue;
        largest = std::max(largest, std::abs(value));
        smallest = std::min(smallest, std::abs(value));
      }
      const bool scientific =
          largest > 1e8 || (!all_integers && largest > 0 && (largest / smallest > 1e3 || smallest < 1e-4));
      for (int64_t offset : offsets) cells.push_back(format_float(data[offset], scientific));
    }
  });
  return cells;
}

struct Layout {
  const Shape& shape;
  bool abridged;
  size_t width;  // every cell is right-aligned to this width
  const std::vector<std::string>& cells;
  size_t next_cell = 0;
};

// Writes dim `dim` of the tensor, whose '[' sits at column `column`.
void write_dim(std::string& out, Layout& layout, int64_t dim, int64_t column) {
  const int64_t ndim = static_cast<int64_t>(layout.shape.size());
  const int64_t size = layout.shape[dim];
  const bool cut = elided(size, layout.abridged);
  const int64_t shown = cut ? 2 * kEdgeItems : size;
  const bool innermost = dim == ndim - 1;
  // Rows of the innermost dim wrap after this many entries; outer dims put each
  // entry on its own line, with a blank line between blocks of 3-D and up.
  const int64_t per_line =
      std::max<int64_t>(1, (kLineWidth - column - 1) / static_cast<int64_t>(layout.width + 2));
  const std::string indent(static_cast<size_t>(column + 1), ' ');
  std::string outer_separator = ",";
  outer_separator.append(static_cast<size_t>(ndim - dim - 1), '\n').append(indent);

  out += '[';
  int64_t entries = 0;  // written so far, the "..." included
  const auto separate = [&]() {
    if (entries == 0) return;
    if (!innermost) out += outer_separator;
    else if (entries % per_line == 0) out.append(",\n").append(indent);
    else out += ", ";
  };
  for (int64_t position = 0; position < shown; ++position) {
    if (cut && position == kEdgeItems) {
      separate();
      out += "...";
      ++entries;
    }
    separate();
    if (innermost) {
      const std::string& cell = layout.cells[layout.next_cell++];
      out.append(layout.width - cell.size(), ' ').append(cell);
    } else {
      write_dim(out, layout, dim + 1, column + 1);
    }
    ++entries;
  }
  out += ']';
}

}  // namespace

std::string to_string(const Tensor& x) {
  if (!x.defined()) return "tensor(undefined)";
  const std::string prefix = "tensor(";
  const bool abridged = x.numel() > kAbridgeAbove;
  std::vector<int64_t> offsets;
  if (x.numel() > 0) collect_offsets(x, abridged, 0, 0, offsets);
  const std::vector<std::string> cells = format_cells(x, offsets);
  size_t width = 0;
  for (const std::string& cell : cells) width = std::max(width, cell.size());

  std::string out = prefix;
  if (x.dim() == 0) {
    out += cells.front();
  } else if (x.numel() == 0) {
    out += "[]";
  } else {
    Layout layout{x.shape(), abridged, width, cells};
    write_dim(out, layout, 0, static_cast<int64_t>(prefix.size()));
  }
  out.append(", shape=").append(shape_str(x.shape())).append(", dtype=").append(dtype_name(x.dtype()));
  if (!x.name().empty()) out.append(", name=").append(x.name());
  if (x.requires_grad()) out.append(", requires_grad=True");
  return out.append(")");
}

std::ostream& operator<<(std::ostream& out, const Tensor& x) { return out << to_string(x); }

}  // namespace tg
