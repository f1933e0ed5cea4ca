// The walk-through (inspect/walkthrough.h) as plain text for a terminal of 100
// columns: for each stage its title, formula, explanation, source file, shapes,
// statistics and a small slice of its values (the first and last rows, the first
// and last columns, "..." between); attention as ASCII shade heatmaps, one per
// head; then the top-k table, the loss and gradient norms, the causality check.
#pragma once
#include <string>

#include "tinygpt/inspect/walkthrough.h"

namespace tg::inspect {

std::string render_text(const Walkthrough& walkthrough);

// The shades of the heatmaps, lightest (0) to darkest (1), and the mark of a
// masked cell (a key after its query).
inline constexpr const char* kHeatmapShades = " .:-=+*#%@";
inline constexpr char kMaskedCell = '_';

}  // namespace tg::inspect
