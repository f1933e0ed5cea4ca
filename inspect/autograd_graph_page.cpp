#include "tinygpt/inspect/autograd_graph_page.h"

#include <algorithm>

#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/svg.h"

namespace tg::inspect {

namespace {

using svg::escape;

// The drawing's geometry, in px: two columns of boxes, one row per node, arcs to the right.
constexpr int kRowPitch = 62, kBoxHeight = 54, kTop = 12;
constexpr int kLeafX = 0, kLeafWidth = 400, kOpX = 460, kOpWidth = 520;
constexpr int kArcMinimum = 26, kArcPerRow = 9, kArcMaximum = 290;
constexpr int kWidth = kOpX + kOpWidth + kArcMaximum + 10;
constexpr size_t kLeafValues = 2, kOpValues = 3;  // values shown in a box's line (all six on hover)

constexpr const char* kStyle = R"(
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1320px; padding: 0 16px 48px; color: #222; }
code { font-family: ui-monospace, monospace; }
.explain { max-width: 900px; line-height: 1.45; }
section.graph { margin-top: 28px; border-top: 1px solid #ccc; }
.controls { display: flex; gap: 8px; align-items: center; margin: 10px 0; flex-wrap: wrap; }
.controls button { font: inherit; padding: 4px 14px; }
p.status { margin: 4px 0 10px; min-height: 2.8em; max-width: 1000px; }
.drawing { overflow-x: auto; }
svg text { font-family: ui-monospace, monospace; font-size: 12px; fill: #222; }
svg text.title { font-weight: bold; }
.node rect { fill: #fafafa; stroke: #999; stroke-width: 1; }
.node[data-leaf="1"] rect { fill: #eef4fb; }
.node.done rect { fill: #eaf6ea; stroke: #5a5; }
.node.current rect { fill: #fff3c4; stroke: #c80; stroke-width: 3; }
.node .grad-value { display: none; fill: #a0301c; }
.node.reached .grad-value { display: inline; }
.node.reached .grad-pending { display: none; }
.node .grad-pending { fill: #888; }
path.edge { fill: none; stroke: #bbb; stroke-width: 1.2; marker-end: url(#arrow); }
path.edge.flowing { stroke: #c0392b; stroke-width: 2; }
)";

// Why the page shows what it shows: the tape, the order, the chain rule, accumulation.
constexpr const char* kExplanation = R"(<div class="explain">
<p>Every differentiable op that reads a tensor requiring a gradient records a <b>node</b> on the
<b>tape</b> (<code>autograd/node.h</code>): its name, a function for its backward and one edge per input.
A node gets a number when it is created, its <b>sequence</b>; the boxes below are drawn in that order, top to
bottom, the leaves (parameters and inputs, blue) beside the first op that reads them. Each box shows the
forward value (a scalar in full, a tensor by its shape, its norm and its first values; hover for more).</p>
<p><b>Backward</b> (<code>autograd/backward.cpp</code>) runs the nodes in <b>reverse creation order</b>. That
order is valid because a node is created only after the nodes of its inputs: every op that reads a node's
output was created later, so it runs earlier in the backward and has already added its share to that
node's gradient when the node's own turn comes. No separate topological sort is needed.</p>
<p>At each node the <b>chain rule</b>: the node receives dL/d(its output) and multiplies it by the local
derivative of its op, d(output)/d(input), to get the share it passes along each edge: for
<code>a*b</code>, b&middot;g to a and a&middot;g to b; for <code>a+b</code>, g to both; for
<code>tanh(n)</code>, (1 - tanh(n)&sup2;)&middot;g.</p>
<p>A tensor read by two ops (the block's input: by the first norm and by the residual add) receives two
shares, and its gradient is their <b>sum</b>. So a box shows its gradient only once every op reading it has
run ("1 of 2 shares in" until then). Press <i>Step</i> to run one node's backward, <i>Play</i> to run
them all.</p>
</div>
)";

constexpr const char* kScript = R"(
for (const section of document.querySelectorAll('section.graph')) {
  const nodes = [...section.querySelectorAll('g.node')];
  const inputs = nodes.map((node) => node.dataset.inputs ? node.dataset.inputs.split(',').map(Number) : []);
  const readers = nodes.map(() => 0);  // edges out of each node: the shares it waits for
  inputs.forEach((list) => list.forEach((input) => readers[input]++));
  const ops = nodes.filter((node) => node.dataset.leaf === '0')
                   .sort((a, b) => Number(b.dataset.sequence) - Number(a.dataset.sequence));
  const edges = [...section.querySelectorAll('path.edge')];
  const status = section.querySelector('p.status');
  let step = 0, timer = null;
  function show(count) {
    step = count;
    const shares = nodes.map(() => 0);
    nodes.forEach((node) => node.classList.remove('current', 'done', 'reached'));
    edges.forEach((edge) => edge.classList.remove('flowing'));
    if (ops.length) ops[0].classList.add('reached');  // the output: its gradient is where backward starts
    for (let i = 0; i < count; i++) {
      const node = ops[i], index = Number(node.dataset.index);
      node.classList.add(i === count - 1 ? 'current' : 'done');
      for (const input of inputs[index]) shares[input]++;
      for (const edge of edges)
        if (Number(edge.dataset.to) === index && i === count - 1) edge.classList.add('flowing');
    }
    nodes.forEach((node, index) => {
      if (readers[index] > 0 && shares[index] === readers[index]) node.classList.add('reached');
      const pending = node.querySelector('.grad-pending');
      if (readers[index] > 0)
        pending.textContent = shares[index] === 0 ? 'grad: not reached yet'
                                                  : `grad: ${shares[index]} of ${readers[index]} shares in`;
    });
    if (count === 0) {
      status.textContent = `Backward starts at the output (#${ops[0].dataset.sequence} ${ops[0].dataset.op}) with the ` +
                           `gradient shown on it. ${ops.length} nodes to run, newest first.`;
    } else {
      const node = ops[count - 1], index = Number(node.dataset.index);
      const names = inputs[index].map((input) => nodes[input].dataset.name);
      status.textContent = `Step ${count} of ${ops.length}: #${node.dataset.sequence} ${node.dataset.op} runs its ` +
                           `backward: it multiplies the gradient it received by its local derivative and adds a share ` +
                           `to ${names.join(', ')}.` + (count === ops.length ? ' Done: every leaf has its gradient.' : '');
    }
  }
  function stop() { clearInterval(timer); timer = null; section.querySelector('button.play').textContent = 'Play'; }
  section.querySelector('button.step').addEventListener('click', () => { if (step < ops.length) show(step + 1); });
  section.querySelector('button.reset').addEventListener('click', () => { stop(); show(0); });
  section.querySelector('button.play').addEventListener('click', (event) => {
    if (timer) return stop();
    if (step >= ops.length) show(0);
    event.target.textContent = 'Pause';
    timer = setInterval(() => { show(step + 1); if (step >= ops.length) stop(); }, 500);
  });
  show(0);
}
)";

int row_middle(size_t row) { return kTop + static_cast<int>(row) * kRowPitch + kBoxHeight / 2; }

// One box: the title line, the value, the gradient (hidden until reached) and a waiting line.
std::string node_box(const AutogradGraph& graph, size_t index, const std::string& clip_id) {
  const GraphNode& node = graph.nodes[index];
  const int x = node.is_leaf ? kLeafX : kOpX, width = node.is_leaf ? kLeafWidth : kOpWidth;
  const size_t values = node.is_leaf ? kLeafValues : kOpValues;
  const int y = kTop + static_cast<int>(index) * kRowPitch;
  const std::string name = node.is_leaf ? node.label : "#" + std::to_string(node.sequence) + " " + node.op;
  std::string title = node.is_leaf ? node.label + " (leaf)" : name + (node.label.empty() ? "" : "  " + node.label);
  std::string inputs;
  for (size_t input : node.inputs) inputs += (inputs.empty() ? "" : ",") + std::to_string(input);
  std::string out = "<g class=\"node\" data-index=\"" + std::to_string(index) + "\" data-leaf=\"" +
                    (node.is_leaf ? "1" : "0") + "\" data-sequence=\"" + std::to_string(node.sequence) +
                    "\" data-op=\"" + escape(node.op) + "\" data-name=\"" + escape(node.is_leaf ? node.label : name) +
                    "\" data-inputs=\"" + inputs + "\" transform=\"translate(" + std::to_string(x) + "," +
                    std::to_string(y) + ")\">";
  out += "<title>" + escape(title) + "\nvalue: " + escape(glance_text(node.value, TensorGlance::kShownValues)) +
         "\ngrad: " + escape(glance_text(node.gradient, TensorGlance::kShownValues)) + "</title>";
  out += "<rect width=\"" + std::to_string(width) + "\" height=\"" + std::to_string(kBoxHeight) + "\" rx=\"4\"/>";
  out += "<g clip-path=\"url(#" + clip_id + ")\">";
  out += "<text class=\"title\" x=\"8\" y=\"16\">" + escape(title) + "</text>";
  out += "<text class=\"value\" x=\"8\" y=\"32\">value " + escape(glance_text(node.value, values)) + "</text>";
  out += "<text class=\"grad-value\" x=\"8\" y=\"48\">grad " + escape(glance_text(node.gradient, values)) + "</text>";
  out += "<text class=\"grad-pending\" x=\"8\" y=\"48\">grad: not reached yet</text>";
  return out + "</g></g>\n";
}

// The edges into op `index`: lines from leaves, arcs on the right from earlier ops.
std::string edges_into(const AutogradGraph& graph, size_t index) {
  std::string out;
  const int to_y = row_middle(index);
  for (size_t input : graph.nodes[index].inputs) {
    const int from_y = row_middle(input);
    std::string path;
    if (graph.nodes[input].is_leaf) {
      const int middle = (kLeafX + kLeafWidth + kOpX) / 2;
      path = "M" + std::to_string(kLeafX + kLeafWidth) + "," + std::to_string(from_y) + " C" + std::to_string(middle) +
             "," + std::to_string(from_y) + " " + std::to_string(middle) + "," + std::to_string(to_y) + " " +
             std::to_string(kOpX) + "," + std::to_string(to_y);
    } else {
      const int right = kOpX + kOpWidth;
      const int bulge = std::min(kArcMaximum, kArcMinimum + kArcPerRow * static_cast<int>(index - input));
      path = "M" + std::to_string(right) + "," + std::to_string(from_y) + " C" + std::to_string(right + bulge) + "," +
             std::to_string(from_y) + " " + std::to_string(right + bulge) + "," + std::to_string(to_y) + " " +
             std::to_string(right + 2) + "," + std::to_string(to_y);
    }
    out += "<path class=\"edge\" data-from=\"" + std::to_string(input) + "\" data-to=\"" + std::to_string(index) +
           "\" d=\"" + path + "\"/>\n";
  }
  return out;
}

std::string graph_section(const AutogradGraph& graph, size_t number) {
  const std::string id = "graph" + std::to_string(number);
  const int height = kTop * 2 + static_cast<int>(graph.nodes.size()) * kRowPitch;
  size_t ops = 0;
  for (const GraphNode& node : graph.nodes) ops += node.is_leaf ? 0 : 1;
  std::string out = "<section class=\"graph\" data-graph=\"" + std::to_string(number) + "\">\n<h2>" +
                    escape(graph.title) + "</h2>\n<p>" + escape(graph.description) + " " + std::to_string(ops) +
                    " ops, " + std::to_string(graph.nodes.size() - ops) + " leaves.</p>\n";
  out += "<div class=\"controls\"><button class=\"step\">Step backward</button><button class=\"play\">Play</button>"
         "<button class=\"reset\">Reset</button></div>\n<p class=\"status\"></p>\n";
  out += "<div class=\"drawing\"><svg width=\"" + std::to_string(kWidth) + "\" height=\"" + std::to_string(height) +
         "\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(height) + "\">\n";
  // Clips keep a long line inside its box; ids are per graph, since one page holds several.
  out += "<defs><clipPath id=\"" + id + "-leaf\"><rect width=\"" + std::to_string(kLeafWidth - 4) + "\" height=\"" +
         std::to_string(kBoxHeight) + "\"/></clipPath><clipPath id=\"" + id + "-op\"><rect width=\"" +
         std::to_string(kOpWidth - 4) + "\" height=\"" + std::to_string(kBoxHeight) + "\"/></clipPath></defs>\n";
  for (size_t index = 0; index < graph.nodes.size(); ++index)
    if (!graph.nodes[index].is_leaf) out += edges_into(graph, index);
  for (size_t index = 0; index < graph.nodes.size(); ++index)
    out += node_box(graph, index, id + (graph.nodes[index].is_leaf ? "-leaf" : "-op"));
  return out + "</svg></div>\n</section>\n";
}

}  // namespace

std::string glance_text(const TensorGlance& glance, size_t values) {
  if (!glance.present) return "(none)";
  if (glance.count == 1) return number(glance.first.front(), 5) + (glance.shape.empty() ? "" : " " + shape_text(glance.shape));
  std::string text = shape_text(glance.shape) + " norm " + number(glance.norm) + ":";
  const size_t shown = std::min(values, glance.first.size());
  for (size_t i = 0; i < shown; ++i) text += (i ? ", " : " ") + number(glance.first[i]);
  return glance.count > static_cast<int64_t>(shown) ? text + ", ..." : text;
}

std::string render_autograd_graph_page(const std::vector<AutogradGraph>& graphs, const std::string& subtitle) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                    "<title>tinygpt explain: the autograd graph</title>\n<style>" + std::string(kStyle) +
                    "</style>\n</head>\n<body>\n<h1>The autograd graph, and backward node by node</h1>\n<p>" +
                    escape(subtitle) + "</p>\n" + kExplanation;
  // One arrowhead for every edge of the page, in an SVG of its own.
  out += "<svg width=\"0\" height=\"0\" style=\"position:absolute\"><defs><marker id=\"arrow\" viewBox=\"0 0 8 8\" "
         "refX=\"7\" refY=\"4\" markerWidth=\"7\" markerHeight=\"7\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" "
         "fill=\"#999\"/></marker></defs></svg>\n";
  for (size_t number = 0; number < graphs.size(); ++number) out += graph_section(graphs[number], number);
  return out + "<script>" + kScript + "</script>\n</body>\n</html>\n";
}

}  // namespace tg::inspect
