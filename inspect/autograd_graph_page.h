// Autograd graphs (inspect/autograd_graph.h) as one self-contained web page:
// inline SVG, CSS and a small inline script, no network, so it opens from disk.
//
// Each graph is drawn as its tape: one row per node in creation order, top to
// bottom; leaves (parameters, inputs) in the left column, ops in the right one.
// A leaf -> op edge is a line between the columns, an op -> op edge an arc on
// the right (the longer the jump back along the tape, the wider the arc). Each
// node shows its op, its forward value and, once the backward has reached it,
// its gradient. "Step" runs one op's backward in reverse creation order: the op
// is highlighted (class "current"; those run before, "done"), the edges to its
// inputs light up, and an input's gradient appears once every op reading it has
// added its share ("2 of 2 shares"). Play and Reset as named.
//
// The page's hooks for tests: section.graph[data-graph=i] per graph; g.node
// with data-index, data-sequence (an op's), data-leaf; in it text.grad-value
// (shown when the node is "reached") and text.grad-pending; button.step,
// .play, .reset; p.status says the step.
#pragma once
#include <string>
#include <vector>

#include "tinygpt/inspect/autograd_graph.h"

namespace tg::inspect {

// The whole page: a short explanation of the tape and of backward, then each
// graph in order, with its controls. `subtitle` says what was loaded.
std::string render_autograd_graph_page(const std::vector<AutogradGraph>& graphs, const std::string& subtitle);

// A glance in one line: "0.7071", or "(1, 8, 32) norm 3.2: 0.12, -0.5, 0.33, ..."
// with at most `values` values.
std::string glance_text(const TensorGlance& glance, size_t values);

}  // namespace tg::inspect
