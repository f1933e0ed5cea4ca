// The walk-through (inspect/walkthrough.h) as one self-contained web page: inline
// CSS and a small inline script, no network (no fonts, no CDN, no http links), so
// it opens from disk anywhere.
//
// The page: a diagram of the model (Tokens -> Embeddings -> Block 0..L-1 -> Output
// -> Loss) whose every stage links to its section; per stage (anchor = the stage
// id) the title, formula, explanation, source file, shapes, statistics, a
// histogram of its values, attention heatmaps per head and the first values; the
// tokens, the top-k predictions per position, the loss and gradient norms, the
// causality check.
//
// The inline script, once the page has loaded, checks every stage section exists
// and sets <body data-rendered="N"> (N = the number of stage sections found, or
// "missing: id ..." if any is absent) and records script errors into
// <body data-errors="...">: a headless browser's --dump-dom shows both.
#pragma once
#include <string>

#include "inspect/walkthrough.h"

namespace tg::inspect {

std::string render_html(const Walkthrough& walkthrough);

}  // namespace tg::inspect
