// The walk-through (inspect/walkthrough.h) as one self-contained web page: inline
// CSS and a small inline script, no network (no fonts, no CDN, no http links), so
// it opens from disk anywhere.
//
// The page: a block diagram of the model (inspect/html_block_diagram.h) whose
// every box links to its stage's section; per stage (anchor = the stage id) the
// title, formula, explanation, source file, shapes, statistics, a histogram of
// its values (the probabilities: bars of the top tokens), attention heatmaps per
// head with every cell's value and their colour scale
// (inspect/html_attention_maps.h), the first values (a per-head stage says which
// heads); the tokens, the top-k predictions per position, the loss and gradient
// norms, the causality check. A token's text is written as inspect/html_text.h
// says, a space as "␣" everywhere.
//
// The inline script, once the page has loaded, checks every link of the diagram
// leads to a section and every stage section is linked, and sets <body
// data-rendered="N"> (N = the number of stage sections found, or "missing: id
// ..." if any is absent or unlinked) and records script errors into
// <body data-errors="...">: a headless browser's --dump-dom shows both.
#pragma once
#include <string>

#include "tinygpt/inspect/walkthrough.h"

namespace tg::inspect {

struct HtmlOptions {
  // One colour scale for all heads of each attention stage (scores, mask), so
  // equal colours mean equal values; else each head its own. The weights always
  // share one, 0 to 1. Either way the page prints the scale.
  bool shared_attention_scale = false;
};

std::string render_html(const Walkthrough& walkthrough, const HtmlOptions& options = {});

}  // namespace tg::inspect
