// The attention heatmaps of the walk-through's web page (inspect/html_report.h):
// one per head of each attention stage (scores, mask, weights), every cell's
// value on hover and, where the cell is big enough, written in it.
//
// How many positions they show. Every heatmap shows every position of the
// prompt (and target), up to the context (about 480 px wide up to 60 positions,
// cells of 8 px past that, in a box that scrolls sideways when the window is
// narrower), as long as the page's heatmaps together hold at most
// kHeatmapCells cells: each cell carries its exact value (about 55 bytes), so
// the bound keeps a page to about 10 MB. When it bites, every heatmap of the page
// shows the same first P positions (P^2 x the number of heatmaps fits the bound),
// and the page says so in each attention section and in its header: what was
// cut, why, and the flags that show it whole. `--layer N` leaves one block's
// heatmaps on the page, which then get the whole bound (a 100-token prompt in a
// model of 4 heads: 3 x 4 x 100^2 = 120,000 cells, all of them); `--head H` one
// head's (GPT-2 at its full context of 1024 still does not fit: the first 200).
#pragma once
#include <cstdint>
#include <string>

#include "tinygpt/inspect/walkthrough.h"

namespace tg::inspect {

inline constexpr int64_t kHeatmapCells = 120000;

struct HeatmapPlan {
  int64_t positions = 0;  // each heatmap shows the first `positions` queries and keys ...
  int64_t time = 0;       // ... of these (T)
  int64_t heatmaps = 0;   // on the page: blocks x attention stages x heads
  int64_t blocks = 0;     // shown
  int64_t heads = 0;      // shown per attention stage
};

HeatmapPlan plan_heatmaps(const Walkthrough& walkthrough);

// What the plan cuts and why, and what shows it whole, as a paragraph; "" when nothing is cut.
std::string heatmap_cut_note(const HeatmapPlan& plan);

// The stage's heatmaps, one per shown head, each in a box that scrolls sideways, and a line
// saying which colour scale they use: the weights always 0 to 1; scores and mask each head its
// own, or with `shared_scale` one for all heads of the stage (equal colours, equal values).
std::string attention_heatmaps(const Walkthrough& walkthrough, const Stage& stage, const HeatmapPlan& plan,
                               bool shared_scale);

}  // namespace tg::inspect
