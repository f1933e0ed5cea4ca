#include "tinygpt/inspect/html_report.h"

#include <algorithm>
#include <cmath>

#include "tinygpt/inspect/html_attention_maps.h"
#include "tinygpt/inspect/html_block_diagram.h"
#include "tinygpt/inspect/html_text.h"
#include "tinygpt/inspect/stage_descriptions.h"
#include "tinygpt/inspect/svg.h"
#include "tinygpt/nn/functional/gelu.h"
#include "tinygpt/nn/functional/relu_squared.h"
#include "tinygpt/tensor/factory.h"

namespace tg::inspect {

namespace {

using svg::escape;

constexpr int64_t kTableRows = 6;      // a stage's table of first values: at most 6 rows ...
constexpr int64_t kTableColumns = 8;   // ... of 8 columns
constexpr size_t kTablesPerStage = 2;  // and at most 2 such tables (the output, one extra view)

// Inline only: no fonts, no images, nothing fetched.
constexpr const char* kStyle = R"css(
body { font-family: system-ui, sans-serif; margin: 0 auto; max-width: 1180px; padding: 0 16px 48px; color: #222; }
h1 { font-size: 1.5em; margin-bottom: 4px; }
h2 { font-size: 1.2em; margin: 0 0 4px; }
code, pre, .token { font-family: ui-monospace, monospace; }
.token { background: #f1f1f1; border-radius: 3px; padding: 0 3px; white-space: pre; }
.summary { color: #555; }
.prose { white-space: pre-wrap; background: #f1f1f1; border-radius: 3px; padding: 0 3px; font-family: ui-monospace, monospace; }
#diagram { margin: 16px 0; font-size: 0.9em; }
#diagram svg { display: block; width: 100%; max-width: 1110px; height: auto; }
#diagram .box { fill: #f6f9fc; stroke: #6a8caf; stroke-width: 1.2; }
#diagram a:hover .box { fill: #dbeaf7; }
#diagram text { fill: #345; }
#diagram .name { font-weight: bold; font-size: 11px; fill: #06c; }
#diagram .name.long { font-size: 9.5px; }
#diagram a { color: #06c; }
nav.blocks { font-size: 0.85em; margin: 2px 0 6px; }
nav.blocks a { margin: 0 3px; color: #06c; }
.heatmaps { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
.scroll { max-width: 100%; min-width: 0; overflow-x: auto; }
.cut { background: #fff4e0; border-left: 3px solid #e6a23c; padding: 4px 8px; }
#contents { position: sticky; top: 0; z-index: 2; background: #fff; border-bottom: 1px solid #ddd; padding: 6px 0;
            font-size: 0.85em; }
#contents a { margin-right: 10px; color: #06c; text-decoration: none; white-space: nowrap; }
#contents a:hover { text-decoration: underline; }
section { border-top: 1px solid #ddd; padding: 14px 0; scroll-margin-top: 40px; }
section:target { background: #fffbe6; }
.formula { background: #f5f5f5; padding: 6px 10px; border-left: 3px solid #6baed6; white-space: pre-wrap; }
.pictures { display: flex; flex-wrap: wrap; gap: 12px; align-items: flex-start; }
table { border-collapse: collapse; font-size: 0.85em; margin: 6px 0; }
td, th { border: 1px solid #ddd; padding: 2px 6px; text-align: right; }
th { background: #f3f3f3; }
td.text { text-align: left; }
.bar { display: inline-block; height: 10px; background: #6baed6; vertical-align: middle; }
.ok { color: #2a7d2a; } .bad { color: #b22; }
.up { font-size: 0.8em; }
)css";

// The recorder runs first, so an error anywhere later on the page is caught.
constexpr const char* kErrorRecorder = R"js(
window.addEventListener('error', function (event) {
  document.body.dataset.errors += (event.message || 'error') + ' at line ' + (event.lineno || '?') + '; ';
});
)js";

// After load: every link of the diagram leads to a section of the page, every
// stage the diagram (or a stage's "this stage in block" links) leads to has a
// visible section, and every stage section is linked so; data-rendered says how
// many, or what is missing.
constexpr const char* kRenderCheck = R"js(
window.addEventListener('load', function () {
  var body = document.body;
  var linked = {};
  var problems = [];
  document.querySelectorAll('#diagram a').forEach(function (link) {
    var target = (link.getAttribute('href') || '').slice(1);
    if (!document.getElementById(target)) problems.push('the diagram links #' + target + ', not on the page');
  });
  document.querySelectorAll('#diagram a[data-stage], nav.blocks a[data-stage]').forEach(function (link) {
    var id = link.getAttribute('data-stage');
    linked[id] = true;
    var section = document.getElementById(id);
    if (!section || section.offsetHeight === 0) problems.push(id);
  });
  var sections = document.querySelectorAll('section.stage');
  sections.forEach(function (section) {
    if (!linked[section.id]) problems.push(section.id + ' (not in the diagram)');
  });
  if (sections.length !== Number(body.dataset.stages)) problems.push(sections.length + ' sections');
  // The table of contents stays at the top of the window wherever the reader is
  // (checked at the bottom of the page, then the reader's place is given back).
  var readerX = window.scrollX, readerY = window.scrollY;
  window.scrollTo(0, document.documentElement.scrollHeight);
  var contents = document.getElementById('contents');
  var top = contents ? contents.getBoundingClientRect().top : NaN;
  if (window.scrollY > 0 && !(Math.abs(top) < 1)) problems.push('the table of contents scrolled away (top ' + top + ')');
  window.scrollTo(readerX, readerY);
  body.dataset.rendered = problems.length ? 'missing: ' + problems.join(', ') : String(sections.length);
});
)js";

// "ln_1" for "block0.ln_1", "tokens" for "embed.tokens" and for "tokens".
std::string short_name(const std::string& id) {
  const size_t dot = id.find('.');
  return dot == std::string::npos ? id : id.substr(dot + 1);
}

// A values table's column header: the token whose id the column is (logits,
// probabilities: one column per vocabulary entry), else the column's index.
std::string column_header(const Walkthrough& walkthrough, int64_t column, bool columns_are_tokens) {
  if (!columns_are_tokens) return "<th>" + std::to_string(column) + "</th>";
  const auto id = static_cast<size_t>(column);
  const std::string token = id < walkthrough.vocabulary.size() ? shown_token(walkthrough.vocabulary[id]) : "?";
  return "<th title=\"id " + std::to_string(column) + "\"><span class=\"token\">" + escape(token) + "</span></th>";
}

std::string page_header(const Walkthrough& walkthrough) {
  const GPTConfig& config = walkthrough.config;
  std::string out = "<h1>Inside the model: one prompt, layer by layer</h1>\n<p class=\"summary\">" +
                    escape(walkthrough.model_description) + "<br>" + std::to_string(config.n_layer) + (config.n_layer == 1 ? " block, " : " blocks, ") +
                    std::to_string(config.n_head) + " heads, " + std::to_string(config.n_embd) + " channels, context " +
                    std::to_string(config.block_size) + ", vocabulary " + std::to_string(config.vocab_size) + ", " +
                    positional_encoding_name(config.positional) + " positions" +
                    (block_description(config).empty() ? "" : "; " + escape(block_description(config))) +
                    ". The step-by-step forward matches the model's own forward to " +
                    number(walkthrough.forward_match, 3) + " (largest difference of the logits).</p>\n";
  out += "<p>Prompt <span class=\"prose\">" + escape(walkthrough.prompt) + "</span>";
  if (!walkthrough.target.empty()) out += ", target <span class=\"prose\">" + escape(walkthrough.target) + "</span>";
  return out + ". Click a stage in the diagram to jump to it.</p>\n";
}

// One link per group of stages (the first stage of each) and per closing
// section, in a bar that stays at the top of the window: the page is long.
std::string contents_bar(const Walkthrough& walkthrough) {
  std::string out = "<nav id=\"contents\"><strong>Contents:</strong> ";
  std::string open_group;
  for (const Stage& stage : walkthrough.stages) {
    if (stage.group == open_group) continue;
    open_group = stage.group;
    out += "<a href=\"#" + escape(stage.id) + "\">" + escape(stage.group) + "</a>";
  }
  out += "<a href=\"#predictions\">Predictions</a>";
  if (walkthrough.loss) out += "<a href=\"#loss\">Loss</a>";
  return out + "<a href=\"#causality\">Causality</a></nav>\n";
}

// A stage holding one tensor per shown head (labelled "head h" or "KV head g (...)").
bool is_per_head(const Stage& stage) {
  if (stage.tensors.empty()) return false;
  const std::string& label = stage.tensors[0].label;
  return label.starts_with("head ") || label.starts_with("KV head ");
}

// The values the histogram counts: every shown head of a per-head stage, else the output.
std::vector<double> histogram_values(const Stage& stage) {
  if (stage.tensors.empty()) return {};
  if (!is_per_head(stage)) return stage.tensors[0].value.to_vector<double>();
  std::vector<double> values;
  for (const ShownTensor& shown : stage.tensors) {
    const std::vector<double> head = shown.value.to_vector<double>();
    values.insert(values.end(), head.begin(), head.end());
  }
  return values;
}

// The first rows and columns of a tensor's values, seen as (rows, last dim); rows
// are labelled with their token when there is one per position, the columns of
// the logits and probabilities with the token of their id.
std::string values_table(const Walkthrough& walkthrough, const Stage& stage, const ShownTensor& shown) {
  const Tensor& value = shown.value;
  const bool columns_are_tokens = stage.id == "logits" || stage.id == "probabilities";
  const int64_t columns = value.dim() >= 1 ? value.size(-1) : 1;
  const int64_t rows = columns > 0 ? value.numel() / columns : 0;
  const bool rows_are_positions = value.dim() >= 2 && value.size(-2) == static_cast<int64_t>(walkthrough.tokens.size());
  const int64_t shown_rows = std::min(rows, kTableRows), shown_columns = std::min(columns, kTableColumns);
  const std::vector<float> values = value.to_vector<float>();
  std::string out = "<table><caption>" + escape(shown.label) + " " + shape_text(value.shape()) + ": the first " +
                    std::to_string(shown_rows) + " of " + std::to_string(rows) + " rows, " +
                    std::to_string(shown_columns) + " of " + std::to_string(columns) +
                    (columns_are_tokens ? " columns (token ids 0, 1, ...)" : " columns") + "</caption><tr><th></th>";
  for (int64_t column = 0; column < shown_columns; ++column)
    out += column_header(walkthrough, column, columns_are_tokens);
  out += "</tr>";
  for (int64_t row = 0; row < shown_rows; ++row) {
    const int64_t position = row % std::max<int64_t>(value.dim() >= 2 ? value.size(-2) : 1, 1);
    out += "<tr><th>" + std::to_string(row) +
           (rows_are_positions ? " " + token_span(walkthrough.tokens[static_cast<size_t>(position)].text) : "") +
           "</th>";
    for (int64_t column = 0; column < shown_columns; ++column)
      out += "<td>" + number(values[static_cast<size_t>(row * columns + column)], 4) + "</td>";
    out += "</tr>";
  }
  return out + "</table>";
}

// For a per-head stage (q, k, v, q_norm, k_norm, attend), which heads its tables
// show of how many: the tables hold the first kTablesPerStage shown heads, the
// histogram every shown one. "" for any other stage.
std::string tables_note(const Stage& stage) {
  if (stage.tensors.empty() || !is_per_head(stage) || stage.output_shape.size() != 4) return "";
  const size_t tables = std::min(stage.tensors.size(), kTablesPerStage);
  std::string shown;
  for (size_t i = 0; i < tables; ++i) shown += (i ? " and " : "") + escape(stage.tensors[i].label);
  const int64_t heads = stage.output_shape[1];
  std::string note = "<p class=\"heads-shown\">The tables: " + shown + " of the stage's " + std::to_string(heads) +
                     " heads (0 to " + std::to_string(heads - 1) + ")";
  if (stage.tensors.size() > tables)
    note += "; the histogram counts all " + std::to_string(stage.tensors.size()) + " shown";
  return note + ". <code>--head H</code> shows one head of your choice.</p>\n";
}

// The extra view of `stage` labelled `label`, or null.
const ShownTensor* view_named(const Stage& stage, const std::string& label) {
  for (const ShownTensor& shown : stage.tensors)
    if (shown.label == label) return &shown;
  return nullptr;
}

// The activation's curve (gelu or relu2, as `kind` says) over the range of its
// inputs, and the actual (input, output) pairs on it as dots (at most kDots of
// them, evenly picked).
std::string activation_chart(const Walkthrough& walkthrough, const std::string& kind, const ShownTensor& input,
                             const ShownTensor& output) {
  constexpr size_t kDots = 400;
  constexpr int64_t kCurvePoints = 121;
  const std::vector<double> inputs = input.value.to_vector<double>(), outputs = output.value.to_vector<double>();
  if (inputs.empty() || inputs.size() != outputs.size()) return "";
  const auto [smallest, largest] = std::minmax_element(inputs.begin(), inputs.end());
  std::vector<double> curve_x;
  for (int64_t i = 0; i < kCurvePoints; ++i)
    curve_x.push_back(*smallest + (*largest - *smallest) * static_cast<double>(i) / (kCurvePoints - 1));
  const Tensor curve_inputs = from_vector(curve_x, {kCurvePoints});
  const bool gelu = kind == "gelu";
  const Tensor curve_y = gelu ? nn::gelu(curve_inputs, walkthrough.config.gelu) : nn::relu_squared(curve_inputs);
  const std::string name = gelu ? "gelu(h)" : "relu(h)^2";
  svg::Series curve{.name = name, .x = curve_x, .y = curve_y.to_vector<double>(), .colour = "#1f77b4",
                    .style = svg::LineStyle::Faint};
  svg::Series dots{.name = "this prompt's inputs", .colour = "#d62728", .style = svg::LineStyle::Points};
  const size_t step = std::max<size_t>(1, inputs.size() / kDots);
  for (size_t i = 0; i < inputs.size(); i += step) {
    dots.x.push_back(inputs[i]);
    dots.y.push_back(outputs[i]);
  }
  return svg::line_chart({curve, dots}, {.title = std::string(gelu ? "the GELU" : "the ReLU^2") +
                                                  " curve and this prompt's inputs",
                                         .x_label = "input h", .left_label = name, .right_label = "", .width = 440,
                                         .height = 260});
}

// The probabilities as bars of the most likely next tokens after the last
// position: their histogram would be a spike near 0 (most of a large vocabulary
// gets almost nothing).
std::string top_tokens_chart(const Walkthrough& walkthrough) {
  if (walkthrough.predictions.empty()) return "";
  const PositionPredictions& last = walkthrough.predictions.back();
  std::vector<std::string> labels;
  std::vector<double> probabilities;
  for (const Prediction& prediction : last.top) {
    labels.push_back(shown_token(prediction.text));
    probabilities.push_back(prediction.probability);
  }
  return svg::bar_chart(labels, probabilities,
                        {.title = "the most likely tokens after position " + std::to_string(last.position) + " (" +
                                  shown_token(last.token) + ")",
                         .value_label = "probability"});
}

std::string tokens_table(const Walkthrough& walkthrough) {
  std::string out = "<table><tr><th>position</th><th>token</th><th>id</th><th>from</th></tr>";
  for (const TokenRow& token : walkthrough.tokens)
    out += "<tr><td>" + std::to_string(token.position) + "</td><td class=\"text\">" + token_span(token.text) +
           "</td><td>" + std::to_string(token.id) + "</td><td class=\"text\">" +
           (token.position < walkthrough.prompt_tokens ? "prompt" : "target") + "</td></tr>";
  return out + "</table>";
}

std::string stage_section(const Walkthrough& walkthrough, const Stage& stage, const HeatmapPlan& heatmaps,
                          const HtmlOptions& options) {
  std::string out = "<section class=\"stage\" id=\"" + escape(stage.id) + "\">\n<h2>" + escape(stage.title) +
                    " <code>" + escape(stage.id) +
                    "</code> <a class=\"up\" href=\"#diagram\">&uarr; diagram</a></h2>\n" +
                    same_stage_in_blocks(walkthrough, stage);
  out += "<pre class=\"formula\">" + escape(stage.formula) + "</pre>\n<p>" + escape(stage.explanation) + "</p>\n";
  std::string inputs;
  for (const std::vector<int64_t>& shape : stage.input_shapes)
    inputs += (inputs.empty() ? "" : ", ") + shape_text(shape);
  out += "<p>Implemented in <code>" + escape(stage.implementation) +
         "</code>. Shapes: " + (inputs.empty() ? "" : inputs + " &rarr; ") + shape_text(stage.output_shape) + ".</p>\n";
  if (!stage.notes.empty()) {
    out += "<ul>";
    for (const std::string& note : stage.notes) out += "<li>" + escape(note) + "</li>";
    out += "</ul>\n";
  }
  // Ids are names, not quantities: their mean or histogram says nothing, the tokens themselves do.
  if (stage.id == "tokens") return out + tokens_table(walkthrough) + "\n</section>\n";
  const Statistics& statistics = stage.statistics;
  out += "<table><tr><th>mean</th><th>std</th><th>min</th><th>max</th></tr><tr><td>" + number(statistics.mean) +
         "</td><td>" + number(statistics.std) + "</td><td>" + number(statistics.min) + "</td><td>" +
         number(statistics.max) + "</td></tr></table>\n";

  out += "<div class=\"pictures\">";
  const ShownTensor* input = view_named(stage, "input");
  if (stage.id == "probabilities") {
    out += top_tokens_chart(walkthrough);
  } else if (input && short_name(stage.id).starts_with("ln")) {  // LayerNorm: before and after side by side
    out += svg::histogram(input->value.to_vector<double>(), {.title = "before: the input of " + stage.id});
    out += svg::histogram(histogram_values(stage), {.title = "after: values of " + stage.id});
  } else {
    out += svg::histogram(histogram_values(stage), {.title = "values of " + stage.id});
  }
  if (input && (short_name(stage.id) == "gelu" || short_name(stage.id) == "relu2"))
    out += activation_chart(walkthrough, short_name(stage.id), *input, stage.tensors[0]);
  out += "</div>\n";
  if (stage.view == StageView::Attention)
    out += attention_heatmaps(walkthrough, stage, heatmaps, options.shared_attention_scale);
  if (stage.view == StageView::Values) {
    out += tables_note(stage);
    for (size_t i = 0; i < std::min(stage.tensors.size(), kTablesPerStage); ++i)
      out += "<div class=\"scroll\">" + values_table(walkthrough, stage, stage.tensors[i]) + "</div>\n";
  }
  return out + "</section>\n";
}

std::string probability_cell(const std::string& text, double probability) {
  return "<td class=\"text\" style=\"background: rgba(107, 174, 214, " + number(std::clamp(probability, 0.0, 1.0), 3) +
         ")\">" + token_span(text) + " " + number(probability, 3) + "</td>";
}

std::string predictions_section(const Walkthrough& walkthrough) {
  std::string out =
      "<section id=\"predictions\"><h2>Predictions: the most likely next tokens at each position</h2>\n"
      "<p>Each row reads the tokens up to and including its own, and ranks what comes next.</p><table><tr>"
      "<th>position</th><th>token</th>";
  const size_t k = walkthrough.predictions.empty() ? 0 : walkthrough.predictions[0].top.size();
  for (size_t rank = 1; rank <= k; ++rank) out += "<th>#" + std::to_string(rank) + "</th>";
  out += "</tr>";
  for (const PositionPredictions& row : walkthrough.predictions) {
    out += "<tr><td>" + std::to_string(row.position) + "</td><td class=\"text\">" + token_span(row.token) + "</td>";
    for (const Prediction& prediction : row.top) out += probability_cell(prediction.text, prediction.probability);
    out += "</tr>";
  }
  return out + "</table></section>\n";
}

std::string bar(double value, double largest) {
  const double percent = largest > 0 ? 100 * value / largest : 0;
  return "<span class=\"bar\" style=\"width: " + number(percent * 1.6, 3) + "px\"></span> " + number(value, 4);
}

std::string loss_section(const LossReport& loss) {
  std::string out = "<section id=\"loss\"><h2>Loss on the target</h2>\n<p>Cross-entropy " + number(loss.loss, 5) +
                    " (natural log), perplexity " + number(loss.perplexity, 5) +
                    ": the mean of -log p(target) over the target tokens.</p>\n<table><tr><th>position</th>"
                    "<th>target</th><th>id</th><th>p(target)</th><th>-log p</th></tr>";
  for (const TargetProbability& target : loss.targets)
    out += "<tr><td>" + std::to_string(target.position) + "</td><td class=\"text\">" + token_span(target.text) +
           "</td><td>" + std::to_string(target.id) + "</td><td class=\"text\">" + bar(target.probability, 1) +
           "</td><td>" + number(-std::log(target.probability), 4) + "</td></tr>";
  out +=
      "</table>\n<h2>Gradients: one backward from this loss</h2>\n<p>From the output back to the embeddings: the "
      "norm of dLoss/dx of the residual stream entering each layer, and of dLoss/d&theta; over its parameters.</p>"
      "<table><tr><th>layer</th><th>||dLoss/dx||</th><th>||dLoss/d&theta;||</th></tr>";
  double largest_activation = 0, largest_parameter = 0;
  for (const GradientNorm& norm : loss.gradients) {
    largest_activation = std::max(largest_activation, norm.activation_norm);
    largest_parameter = std::max(largest_parameter, norm.parameter_norm);
  }
  for (const GradientNorm& norm : loss.gradients)
    out += "<tr><td class=\"text\">" + escape(norm.layer) + "</td><td class=\"text\">" +
           bar(norm.activation_norm, largest_activation) + "</td><td class=\"text\">" +
           bar(norm.parameter_norm, largest_parameter) + "</td></tr>";
  return out + "</table></section>\n";
}

std::string causality_section(const CausalityCheck& causality) {
  const bool causal = causality.max_change_earlier == 0;
  return "<section id=\"causality\"><h2>Causality: the future does not leak into the past</h2>\n<p>Changing the "
         "token at position " +
         std::to_string(causality.changed_position) + " from " + token_span(causality.original) + " to " +
         token_span(causality.replacement) + " changes the logits at that position by up to " +
         number(causality.max_change_last, 4) + ", and at every earlier position by up to <span class=\"" +
         (causal ? "ok" : "bad") + "\">" + number(causality.max_change_earlier, 4) + (causal ? " (exactly 0)" : "") +
         "</span>: no position sees a later one.</p></section>\n";
}

}  // namespace

std::string render_html(const Walkthrough& walkthrough, const HtmlOptions& options) {
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>tinygpt explain: " +
                    escape(walkthrough.prompt) + "</title>\n<style>" + kStyle + "</style>\n</head>\n";
  out += "<body data-stages=\"" + std::to_string(walkthrough.stages.size()) +
         "\" data-rendered=\"pending\" data-errors=\"\">\n<script>" + kErrorRecorder + "</script>\n";
  const HeatmapPlan heatmaps = plan_heatmaps(walkthrough);
  out += contents_bar(walkthrough) + page_header(walkthrough) + heatmap_cut_note(heatmaps) + block_diagram(walkthrough);
  for (const Stage& stage : walkthrough.stages) out += stage_section(walkthrough, stage, heatmaps, options);
  out += predictions_section(walkthrough);
  if (walkthrough.loss) out += loss_section(*walkthrough.loss);
  out += causality_section(walkthrough.causality);
  return out + "<script>" + kRenderCheck + "</script>\n</body>\n</html>\n";
}

}  // namespace tg::inspect
