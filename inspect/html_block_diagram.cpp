#include "tinygpt/inspect/html_block_diagram.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/inspect/svg.h"

namespace tg::inspect {

namespace {

using svg::escape;

// The layout, in pixels of the SVG's view box (the page scales it down to fit a narrow window).
constexpr int kWidth = 1110;
constexpr int kStreamX = 120;                   // the residual stream's line
constexpr int kBranchX = 190;                   // a branch's first box
constexpr int kBoxWidth = 90, kBoxHeight = 40;  // a box ...
constexpr int kPitch = 102;                     // ... and the distance between two columns
constexpr int kSlot = 18, kSlotPitch = 22;      // boxes stacked in one column (q, k, v)
constexpr int kRowHeight = 2 * kSlotPitch + kSlot;
constexpr int kNodeRadius = 11;                 // a residual add
constexpr const char* kStreamColour = "#9ecae1";

int column_x(int column) { return kBranchX + column * kPitch; }

std::string at(const char* name, int value) { return std::string(" ") + name + "=\"" + std::to_string(value) + "\""; }

// The drawing of one page's model: boxes linked to the stages of `prefix` ("block0.") and the
// stages outside blocks; `linked` collects the ids drawn.
class Diagram {
 public:
  Diagram(const Walkthrough& walkthrough, std::string prefix) : walkthrough_(walkthrough), prefix_(std::move(prefix)) {}

  // The stage `kind` of the drawn block ("q"), or outside blocks ("ln_f"), if the walk-through has it.
  const Stage* stage(const std::string& kind) const {
    for (const std::string& id : {prefix_ + kind, kind})
      for (const Stage& one : walkthrough_.stages)
        if (one.id == id) return &one;
    return nullptr;
  }
  bool has(const std::string& kind) const { return stage(kind) != nullptr; }

  // A box with the stage's short name in bold and a few words under it (or beside it when short).
  void box(const std::string& kind, int x, int y, int height, const std::string& words) {
    const Stage* shown = stage(kind);
    if (!shown) return;
    linked.insert(shown->id);
    body_ += "<a href=\"#" + escape(shown->id) + "\" data-stage=\"" + escape(shown->id) + "\"><title>" +
             escape(shown->title) + " (" + escape(shown->id) + ")</title><rect" + at("x", x) + at("y", y) +
             at("width", kBoxWidth) + at("height", height) + " rx=\"5\" class=\"box\"/>";
    // 13 characters of the 11 px name fill a box; a longer one ("embed.positions") gets a smaller font.
    const std::string name_class = kind.size() > 13 ? " class=\"name long\">" : " class=\"name\">";
    if (height >= kBoxHeight) {
      body_ += "<text" + at("x", x + kBoxWidth / 2) + at("y", y + 17) + name_class + escape(kind) + "</text>";
      body_ += "<text" + at("x", x + kBoxWidth / 2) + at("y", y + 32) + ">" + escape(words) + "</text></a>";
    } else {
      body_ += "<text" + at("x", x + kBoxWidth / 2) + at("y", y + 13) + " class=\"name\">" + escape(kind) + "</text></a>";
    }
  }

  // A link box to a section that is not a stage (predictions, loss, causality).
  void section_box(const std::string& id, int x, int y, const std::string& words) {
    body_ += "<a href=\"#" + id + "\"><rect" + at("x", x) + at("y", y) + at("width", kBoxWidth) +
             at("height", kBoxHeight) + " rx=\"5\" class=\"box\"/><text" + at("x", x + kBoxWidth / 2) + at("y", y + 17) +
             " class=\"name\">" + id + "</text><text" + at("x", x + kBoxWidth / 2) + at("y", y + 32) + ">" + words +
             "</text></a>";
  }

  // A residual add on the stream at height y, its name left of it.
  void add_node(const std::string& kind, int y) {
    const Stage* shown = stage(kind);
    if (!shown) return;
    linked.insert(shown->id);
    body_ += "<a href=\"#" + escape(shown->id) + "\" data-stage=\"" + escape(shown->id) + "\"><title>" +
             escape(shown->title) + " (" + escape(shown->id) + ")</title><circle" + at("cx", kStreamX) + at("cy", y) +
             at("r", kNodeRadius) + " class=\"box\"/><text" + at("x", kStreamX) + at("y", y + 5) +
             " class=\"name\">+</text><text" + at("x", kStreamX - kNodeRadius - 5) + at("y", y + 4) +
             " text-anchor=\"end\">" + escape(kind) + "</text></a>";
  }

  void arrow(int x1, int y1, int x2, int y2, bool dashed = false) {
    lines_ += "<line" + at("x1", x1) + at("y1", y1) + at("x2", x2) + at("y2", y2) +
              (dashed ? " stroke-dasharray=\"4 3\"" : "") + " marker-end=\"url(#diagram-arrow)\"/>";
  }
  // A line without a head (the first legs of a branch's way back).
  void line(int x1, int y1, int x2, int y2) {
    lines_ += "<line" + at("x1", x1) + at("y1", y1) + at("x2", x2) + at("y2", y2) + "/>";
  }
  void label(int x, int y, const std::string& text, const std::string& attributes = "") {
    body_ += "<text" + at("x", x) + at("y", y) + (attributes.empty() ? "" : " " + attributes) + ">" + escape(text) +
             "</text>";
  }
  void frame(int top, int bottom) {
    under_ += "<rect" + at("x", 24) + at("y", top) + at("width", kWidth - 34) + at("height", bottom - top) +
              " rx=\"8\" fill=\"#fbfbfd\" stroke=\"#9ab\" stroke-dasharray=\"6 4\"/>";
  }
  void stream(int top, int bottom) {
    under_ += "<line" + at("x1", kStreamX) + at("y1", top) + at("x2", kStreamX) + at("y2", bottom) + " stroke=\"" +
              kStreamColour + "\" stroke-width=\"6\"/>";
  }

  std::string svg(int height) const {
    return "<svg class=\"block-diagram\" viewBox=\"0 0 " + std::to_string(kWidth) + " " + std::to_string(height) +
           "\" width=\"" + std::to_string(kWidth) + "\" height=\"" + std::to_string(height) +
           "\" font-family=\"monospace\" font-size=\"10\" role=\"img\" aria-label=\"the model as a block diagram\">"
           "<defs><marker id=\"diagram-arrow\" viewBox=\"0 0 8 8\" refX=\"8\" refY=\"4\" markerWidth=\"7\" "
           "markerHeight=\"7\" orient=\"auto\"><path d=\"M0 0L8 4L0 8z\" fill=\"#567\"/></marker></defs>" +
           under_ + "<g stroke=\"#567\" stroke-width=\"1.3\">" + lines_ + "</g><g text-anchor=\"middle\">" + body_ +
           "</g></svg>";
  }

  std::set<std::string> linked;

 private:
  const Walkthrough& walkthrough_;
  std::string prefix_;
  std::string under_, lines_, body_;
};

std::string norm_name(const GPTConfig& config) { return config.norm == nn::NormKind::RMSNorm ? "RMSNorm" : "LayerNorm"; }

// tokens, embed.tokens and the positions (added, or RoPE's angles beside); returns where the stream starts.
int draw_embeddings(Diagram& diagram, const GPTConfig& config, int rotation_column, int attention_top) {
  const int x = kStreamX - kBoxWidth / 2;
  diagram.box("tokens", x, 8, kBoxHeight, "text -> ids");
  diagram.arrow(kStreamX, 48, kStreamX, 68);
  diagram.box("embed.tokens", x, 68, kBoxHeight, "wte[id]");
  if (diagram.has("embed.rope")) {  // RoPE: nothing is added; q and k are rotated in every block
    diagram.box("embed.rope", column_x(rotation_column), 68, kBoxHeight, "RoPE angles");
    if (config.n_layer == 0) {  // a bigram model: no attention, so nothing is rotated
      diagram.label(column_x(rotation_column) + kBoxWidth / 2 + 6, 128, "no block: nothing to rotate",
                    "text-anchor=\"start\"");
      return 108;
    }
    diagram.arrow(column_x(rotation_column) + kBoxWidth / 2, 108, column_x(rotation_column) + kBoxWidth / 2,
                  attention_top, true);
    diagram.label(column_x(rotation_column) + kBoxWidth / 2 + 6, 128, "rotate q, k", "text-anchor=\"start\"");
    return 108;
  }
  const int sum_y = 138;
  diagram.arrow(kStreamX, 108, kStreamX, sum_y - kNodeRadius);
  diagram.add_node("embed.sum", sum_y);
  diagram.box("embed.positions", column_x(0), sum_y - kBoxHeight / 2, kBoxHeight,
              config.positional == PositionalEncoding::Sinusoidal ? "sin, cos of t" : "wpe[t]");
  diagram.arrow(column_x(0), sum_y, kStreamX + kNodeRadius, sum_y);
  return sum_y;
}

// From the stream at `top` + 20 to the branch's first box, and from the box in `last_column` back
// down and left into the stream's add node; returns the node's height.
int branch_ends(Diagram& diagram, int top, int bottom, int last_column, const std::string& add_kind) {
  diagram.arrow(kStreamX, top + 20, column_x(0), top + 20);
  const int node_y = bottom + 18;
  diagram.line(column_x(last_column) + kBoxWidth / 2, top + kBoxHeight, column_x(last_column) + kBoxWidth / 2, node_y);
  diagram.arrow(column_x(last_column) + kBoxWidth / 2, node_y, kStreamX + kNodeRadius, node_y);
  diagram.add_node(add_kind, node_y);
  return node_y;
}

// norm -> q, k, v -> [q_norm, k_norm] -> scores -> mask -> weights -> attend -> concat -> c_proj -> + residual_1.
int draw_attention(Diagram& diagram, const GPTConfig& config, int top) {
  const bool grouped = config.kv_heads() != config.n_head;
  // Right of RoPE's dashed line down to q (or q_norm), when there is one.
  const int rotation_x = column_x(diagram.has("q_norm") ? 2 : 1) + kBoxWidth / 2;
  diagram.label(diagram.has("embed.rope") ? rotation_x + 8 : column_x(0), top - 7,
                "causal self-attention, " + std::to_string(config.n_head) + " heads" +
                    (grouped ? " sharing " + std::to_string(config.kv_heads()) + " KV heads" : ""),
                "text-anchor=\"start\" font-weight=\"bold\" fill=\"#345\"");
  diagram.box("ln_1", column_x(0), top, kBoxHeight, norm_name(config));
  const char* projections[3] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    diagram.box(projections[i], column_x(1), top + i * kSlotPitch, kSlot, "");
    diagram.arrow(column_x(0) + kBoxWidth, top + 20, column_x(1), top + i * kSlotPitch + kSlot / 2);
  }
  int column = 2;
  if (diagram.has("q_norm")) {
    diagram.box("q_norm", column_x(2), top, kSlot, "");
    diagram.box("k_norm", column_x(2), top + kSlotPitch, kSlot, "");
    for (int i = 0; i < 2; ++i)
      diagram.arrow(column_x(1) + kBoxWidth, top + i * kSlotPitch + kSlot / 2, column_x(2), top + i * kSlotPitch + kSlot / 2);
    column = 3;
  }
  for (int i = 0; i < 2; ++i)
    diagram.arrow(column_x(column - 1) + kBoxWidth, top + i * kSlotPitch + kSlot / 2, column_x(column), top + 20);
  const std::vector<std::pair<std::string, std::string>> chain = {
      {"scores", "q.k / sqrt(HS)"}, {"mask", "causal -inf"}, {"weights", "softmax"},
      {"attend", "sum w v"},        {"concat", "heads -> C"}, {"c_proj", "W_o"}};
  for (size_t i = 0; i < chain.size(); ++i) {
    const int x = column_x(column + static_cast<int>(i));
    diagram.box(chain[i].first, x, top, chain[i].first == "attend" ? kRowHeight : kBoxHeight, chain[i].second);
    if (i > 0) diagram.arrow(x - kPitch + kBoxWidth, top + 20, x, top + 20);
  }
  const int attend_x = column_x(column + 3);  // v goes under scores, mask and weights to attend
  diagram.arrow(column_x(1) + kBoxWidth, top + 2 * kSlotPitch + kSlot / 2, attend_x, top + 2 * kSlotPitch + kSlot / 2);
  return branch_ends(diagram, top, top + kRowHeight, column + 5, "residual_1");
}

// norm -> c_fc -> [gate, up] -> gelu | swiglu | relu2 -> c_proj_mlp -> + residual_2.
int draw_mlp(Diagram& diagram, const GPTConfig& config, int top) {
  diagram.label(column_x(0), top - 5, "MLP, each position alone", "text-anchor=\"start\" font-weight=\"bold\" fill=\"#345\"");
  diagram.box("ln_2", column_x(0), top, kBoxHeight, norm_name(config));
  diagram.box("c_fc", column_x(1), top, kBoxHeight, diagram.has("gate") ? "W_fc: gate, up" : "W_fc");
  diagram.arrow(column_x(0) + kBoxWidth, top + 20, column_x(1), top + 20);
  int column = 2;
  if (diagram.has("gate")) {
    diagram.box("gate", column_x(2), top, kSlot, "");
    diagram.box("up", column_x(2), top + kSlotPitch, kSlot, "");
    for (int i = 0; i < 2; ++i) {
      diagram.arrow(column_x(1) + kBoxWidth, top + 20, column_x(2), top + i * kSlotPitch + kSlot / 2);
      diagram.arrow(column_x(2) + kBoxWidth, top + i * kSlotPitch + kSlot / 2, column_x(3), top + 20);
    }
    column = 3;
  } else {
    diagram.arrow(column_x(1) + kBoxWidth, top + 20, column_x(2), top + 20);
  }
  for (const auto& [kind, words] : {std::pair{"gelu", "GELU"}, std::pair{"swiglu", "silu(gate) up"},
                                    std::pair{"relu2", "relu(h)^2"}})
    diagram.box(kind, column_x(column), top, kBoxHeight, words);
  diagram.arrow(column_x(column) + kBoxWidth, top + 20, column_x(column + 1), top + 20);
  diagram.box("c_proj_mlp", column_x(column + 1), top, kBoxHeight, "W_proj");
  return branch_ends(diagram, top, top + kBoxHeight, column + 1, "residual_2");
}

// ln_f on the stream, then logits, probabilities and the closing sections in a row.
int draw_output(Diagram& diagram, const Walkthrough& walkthrough, int top) {
  diagram.box("ln_f", kStreamX - kBoxWidth / 2, top, kBoxHeight, norm_name(walkthrough.config));
  diagram.arrow(kStreamX + kBoxWidth / 2, top + 20, column_x(1), top + 20);
  diagram.box("logits", column_x(1), top, kBoxHeight, walkthrough.config.tie_embeddings ? "x wte^T (tied)" : "lm_head");
  diagram.arrow(column_x(1) + kBoxWidth, top + 20, column_x(2), top + 20);
  diagram.box("probabilities", column_x(2), top, kBoxHeight, "softmax");
  diagram.arrow(column_x(2) + kBoxWidth, top + 20, column_x(3), top + 20);
  diagram.section_box("predictions", column_x(3), top, "top-k next");
  int column = 4;
  if (walkthrough.loss) {
    diagram.arrow(column_x(3) + kBoxWidth, top + 20, column_x(4), top + 20);
    diagram.section_box("loss", column_x(4), top, "and gradients");
    column = 5;
  }
  diagram.section_box("causality", column_x(column) + 20, top, "a check");
  return top + kBoxHeight;
}

// The shown blocks' numbers, from their first stage: {0, 1, 2, 3}, or {2} with --layer 2.
std::vector<std::string> shown_blocks(const Walkthrough& walkthrough) {
  std::vector<std::string> blocks;
  for (const Stage& stage : walkthrough.stages) {
    if (!stage.id.starts_with("block")) continue;
    const std::string number = stage.id.substr(5, stage.id.find('.') - 5);
    if (blocks.empty() || blocks.back() != number) blocks.push_back(number);
  }
  return blocks;
}

// The links under the drawing: every shown block, and any stage the drawing has no box for.
std::string links_under(const Walkthrough& walkthrough, const std::vector<std::string>& blocks,
                        const std::set<std::string>& linked) {
  std::string out;
  if (blocks.size() > 1) {
    out += "<p>Drawn: block " + blocks[0] + ". Every block has these stages, each with its own weights:";
    for (const std::string& block : blocks) {
      const std::string id = "block" + block + ".ln_1";
      out += " <a href=\"#" + id + "\">block " + block + "</a>";
    }
    out += ".</p>";
  }
  std::string others;
  for (const Stage& stage : walkthrough.stages)
    if (!linked.contains(stage.id) && (blocks.empty() || !stage.id.starts_with("block") ||
                                        stage.id.starts_with("block" + blocks[0] + ".")))
      others += " <a href=\"#" + escape(stage.id) + "\" data-stage=\"" + escape(stage.id) + "\">" + escape(stage.id) +
                "</a>";
  if (!others.empty()) out += "<p>Also:" + others + "</p>";
  return out;
}

}  // namespace

std::string block_diagram(const Walkthrough& walkthrough) {
  const std::vector<std::string> blocks = shown_blocks(walkthrough);
  Diagram diagram(walkthrough, blocks.empty() ? "" : "block" + blocks[0] + ".");
  const GPTConfig& config = walkthrough.config;
  const int attention_top = 200;
  const int rotation_column = diagram.has("q_norm") ? 2 : 1;  // where RoPE rotates q and k (as draw_attention)
  const int stream_top = draw_embeddings(diagram, config, rotation_column, attention_top);
  int bottom = attention_top - 20;
  if (!blocks.empty()) {
    const int frame_top = attention_top - 30;
    bottom = draw_attention(diagram, config, attention_top);
    if (diagram.has("ln_2")) bottom = draw_mlp(diagram, config, bottom + 22);
    bottom += 22;
    diagram.frame(frame_top, bottom);
    diagram.label(kWidth - 20, bottom - 7,
                  "block " + blocks[0] + (blocks.size() > 1 ? ", drawn once" : "") +
                      (config.n_layer == 1 ? std::string(": the only block of the model (x 1)")
                                           : ": the model has " + std::to_string(config.n_layer) + " blocks like it (x " +
                                                 std::to_string(config.n_layer) + ")"),
                  "text-anchor=\"end\" font-size=\"11\" font-weight=\"bold\" fill=\"#345\"");
    diagram.label(kStreamX - 8, frame_top - 6, "residual stream", "text-anchor=\"end\" fill=\"#3182bd\"");
  }
  const int output_top = bottom + 24;
  diagram.stream(stream_top, output_top);
  const int height = draw_output(diagram, walkthrough, output_top) + 10;
  return "<nav id=\"diagram\">" + diagram.svg(height) + links_under(walkthrough, blocks, diagram.linked) + "</nav>\n";
}

std::string same_stage_in_blocks(const Walkthrough& walkthrough, const Stage& stage) {
  const std::vector<std::string> blocks = shown_blocks(walkthrough);
  if (blocks.size() < 2 || !stage.id.starts_with("block")) return "";
  const std::string kind = stage.id.substr(stage.id.find('.'));  // ".q"
  std::string out = "<nav class=\"blocks\">This stage in block";
  for (const std::string& block : blocks) {
    const std::string id = "block" + block + kind;
    out += id == stage.id ? " <strong>" + block + "</strong>"
                          : " <a href=\"#" + escape(id) + "\" data-stage=\"" + escape(id) + "\">" + block + "</a>";
  }
  return out + "</nav>\n";
}

}  // namespace tg::inspect
