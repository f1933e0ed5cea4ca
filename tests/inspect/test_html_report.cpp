// The web page: every stage an anchor and a link of the block diagram (drawn as
// the model's configuration is), a heatmap per head of every attention stage with
// each cell's exact value and every position up to the page's bound (saying what
// it cuts), the tables (saying which heads), a token's space as '␣' everywhere,
// the GELU legend clear of its points, escaped text, well-formed markup and
// nothing fetched from the network. (tests/cli/test_html_report.sh opens it in Chromium.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>

#include "tinygpt/inspect/html_report.h"
#include "tinygpt/inspect/html_text.h"
#include "tinygpt/inspect/svg.h"
#include "tests/inspect/picture_checks.h"
#include "tests/inspect/walkthrough_fixture.h"

using namespace tg;
using namespace tg::inspect;
using namespace tg::testing;

namespace {

Walkthrough page_walkthrough(const std::string& target) {
  GPT model(tiny_walkthrough_config(), 41);
  WalkthroughOptions options;
  options.target = target;
  options.model_description = "a tiny model for the page";
  return walk_through(model, tiny_tokenizer(), "bad egg", options);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The stage section `id` of `page`, without its closing tag; "" if there is none.
std::string section_of(const std::string& page, const std::string& id) {
  const size_t start = page.find("<section class=\"stage\" id=\"" + id + "\">");
  return start == std::string::npos ? "" : page.substr(start, page.find("</section>", start) - start);
}

}  // namespace

TEST_CASE("render_html: every stage is a section, an anchor and a link of the diagram") {
  const Walkthrough walkthrough = page_walkthrough("!");
  const std::string page = render_html(walkthrough);
  CHECK(markup_problem(page) == "");
  CHECK(page.starts_with("<!DOCTYPE html>"));
  CHECK(contains(page, "a tiny model for the page"));
  CHECK(contains(page, "data-stages=\"" + std::to_string(walkthrough.stages.size()) + "\""));
  CHECK(contains(page, "data-rendered=\"pending\""));  // the inline script sets it once the page has loaded
  CHECK(occurrences(page, "<section class=\"stage\"") == walkthrough.stages.size());
  for (const Stage& stage : walkthrough.stages) {
    CAPTURE(stage.id);
    CHECK(occurrences(page, "id=\"" + stage.id + "\"") == 1);
    CHECK(contains(page, "<a href=\"#" + stage.id + "\" data-stage=\"" + stage.id + "\""));
    CHECK(contains(page, svg::escape(stage.formula)));
    if (stage.id != "tokens" && stage.id != "probabilities")
      CHECK(contains(page, "values of " + stage.id));  // its histogram
  }
  for (const char* section : {"id=\"predictions\"", "id=\"loss\"", "id=\"causality\"", "href=\"#loss\"",
                              "Gradients: one backward", "(exactly 0)"})
    CHECK(contains(page, section));
  CHECK(page == render_html(walkthrough));  // deterministic
}

TEST_CASE("render_html: a table of contents that stays at the top links each group of stages") {
  const Walkthrough walkthrough = page_walkthrough("!");
  const std::string page = render_html(walkthrough);
  const size_t start = page.find("<nav id=\"contents\">");
  REQUIRE(start != std::string::npos);
  const std::string contents = page.substr(start, page.find("</nav>", start) - start);
  CHECK(start < page.find("<nav id=\"diagram\">"));  // first on the page
  std::string previous_group;
  size_t groups = 0;
  for (const Stage& stage : walkthrough.stages) {
    if (stage.group == previous_group) continue;
    previous_group = stage.group;
    ++groups;
    CAPTURE(stage.group);
    CHECK(contains(contents, "<a href=\"#" + stage.id + "\">" + svg::escape(stage.group) + "</a>"));
  }
  CHECK(groups >= 4);  // tokens, embeddings, a block, the output
  for (const char* closing : {"#predictions", "#loss", "#causality"}) CHECK(contains(contents, closing));
  CHECK(contains(page, "#contents { position: sticky; top: 0;"));
}

TEST_CASE("render_html: a heatmap per head of every attention stage, T x T cells") {
  const Walkthrough walkthrough = page_walkthrough("");
  const std::string page = render_html(walkthrough);
  const size_t time = walkthrough.tokens.size();  // "bad egg": 7 characters
  size_t heatmaps = 0;
  for (const Stage& stage : walkthrough.stages)
    if (stage.view == StageView::Attention) heatmaps += stage.tensors.size();
  CHECK(heatmaps == 2 * 3 * 2);  // 2 blocks x (scores, mask, weights) x 2 heads
  CHECK(heatmap_cells(page) == heatmaps * time * time);
  CHECK(occurrences(page, "rows: query, columns: key, grey: masked") == 2 * 2 * 2);  // mask and weights
  // Without a target: no loss section, and no link to one.
  CHECK(!contains(page, "id=\"loss\""));
  CHECK(!contains(page, "href=\"#loss\""));
}

TEST_CASE("render_html: self-contained, nothing fetched") {
  const std::string page = render_html(page_walkthrough("!"));
  CHECK(!contains(page, "http://"));
  CHECK(!contains(page, "https://"));
  CHECK(!contains(page, "src="));
  CHECK(!contains(page, "<link"));
  CHECK(!contains(page, "@import"));
}

TEST_CASE("render_html: hostile text (tokens, titles, the prompt) is escaped everywhere") {
  const std::string hostile = "<script>alert('x')</script>&\"";
  Walkthrough walkthrough = page_walkthrough("!");
  walkthrough.prompt = hostile;
  walkthrough.model_description = hostile;
  walkthrough.tokens[0].text = hostile;  // the rows and columns of every heatmap, the tables
  walkthrough.stages[0].title = hostile;
  walkthrough.stages[0].notes.push_back(hostile);
  walkthrough.predictions[0].top[0].text = hostile;
  walkthrough.loss->targets[0].text = hostile;
  walkthrough.loss->gradients[0].layer = hostile;
  walkthrough.causality.replacement = hostile;
  const std::string page = render_html(walkthrough);
  CHECK(markup_problem(page) == "");
  CHECK(!contains(page, hostile));
  CHECK(!contains(page, "<script>alert"));
  CHECK(occurrences(page, "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;&amp;&quot;") >= 9);
}

TEST_CASE("render_html: the logits' and probabilities' columns are labelled by token, a space shown as '␣'") {
  const Walkthrough walkthrough = page_walkthrough("");
  REQUIRE(walkthrough.vocabulary.size() == 13);
  CHECK(walkthrough.vocabulary[0] == "\\n");  // tiny_tokenizer(): "\n", " ", "!", ",", ".", "a", ...
  CHECK(walkthrough.vocabulary[1] == " ");
  const std::string page = render_html(walkthrough);
  // Two tables each (logits; probabilities), 8 columns: ids 0 to 7.
  CHECK(occurrences(page, "<th title=\"id 0\"><span class=\"token\">\\n</span></th>") == 2);
  CHECK(occurrences(page, "<th title=\"id 1\"><span class=\"token\">\u2423</span></th>") == 2);
  CHECK(occurrences(page, "<th title=\"id 5\"><span class=\"token\">a</span></th>") == 2);
  CHECK(occurrences(page, "columns (token ids 0, 1, ...)") == 2);
  CHECK(!contains(page, "<th title=\"id 8\""));  // only the first 8 columns
}

TEST_CASE("render_html: the token stage shows the tokens and their ids, no statistics or histogram of ids") {
  const Walkthrough walkthrough = page_walkthrough("!");
  const std::string page = render_html(walkthrough);
  const std::string section = section_of(page, "tokens");
  CHECK(contains(section, "<th>position</th><th>token</th><th>id</th><th>from</th>"));
  for (const TokenRow& token : walkthrough.tokens)
    CHECK(contains(section, "<span class=\"token\">" + svg::escape(shown_token(token.text)) + "</span></td><td>" +
                                std::to_string(token.id) + "</td>"));
  CHECK(!contains(section, "<svg"));
  CHECK(!contains(section, "values of tokens"));
  CHECK(!contains(section, "<th>mean</th>"));
}

TEST_CASE("render_html: the probabilities are drawn as bars of the most likely next tokens, not a histogram") {
  const Walkthrough walkthrough = page_walkthrough("");
  const std::string page = render_html(walkthrough);
  const std::string section = section_of(page, "probabilities");
  CHECK(!contains(section, "values of probabilities"));
  CHECK(contains(section, "the most likely tokens after position 6 (g)"));  // "bad egg"
  const PositionPredictions& last = walkthrough.predictions.back();
  CHECK(occurrences(section, "<rect ") == last.top.size());
  for (const Prediction& prediction : last.top) CHECK(contains(section, number(prediction.probability, 3) + "</text>"));
  CHECK(contains(section, ">probability</text>"));
}

TEST_CASE("render_html: attention heatmaps, each head its own colour scale or one shared by all; the scale is printed") {
  const Walkthrough walkthrough = page_walkthrough("");
  const Stage& scores = *std::find_if(walkthrough.stages.begin(), walkthrough.stages.end(),
                                      [](const Stage& stage) { return stage.id == "block0.scores"; });
  REQUIRE(scores.tensors.size() == 2);
  double smallest = INFINITY, largest = -INFINITY;
  for (const ShownTensor& head : scores.tensors)
    for (double value : head.value.to_vector<double>()) {
      smallest = std::min(smallest, value);
      largest = std::max(largest, value);
    }
  const std::string own = section_of(render_html(walkthrough), "block0.scores");
  CHECK(contains(own, "Colour scale: each head its own"));
  const std::string shared = section_of(render_html(walkthrough, {.shared_attention_scale = true}), "block0.scores");
  CHECK(contains(shared, "Colour scale: one for all heads, from " + number(smallest, 3) + " to " + number(largest, 3)));
  // Both heads' colour bars end at the shared smallest and largest value (the values written in the
  // cells, dark or light, may read the same).
  for (const double end : {largest, smallest}) {
    const std::string label = ">" + number(end, 3) + "</text>";
    CHECK(occurrences(shared, label) - occurrences(shared, "\"#222\"" + label) - occurrences(shared, "\"#fff\"" + label) == 2);
  }
  const std::string weights = section_of(render_html(walkthrough), "block0.weights");
  CHECK(contains(weights, "Colour scale: one for all heads, from 0 to 1"));
}

TEST_CASE("render_html: GELU draws its curve with this prompt's inputs on it; LayerNorm its before and after side by side") {
  const std::string page = render_html(page_walkthrough(""));
  const std::string gelu = section_of(page, "block0.gelu");
  CHECK(contains(gelu, "the GELU curve and this prompt&#39;s inputs"));
  CHECK(contains(gelu, "<polyline"));                           // the curve
  CHECK(occurrences(gelu, "r=\"2\"/>") == 7 * 32);  // a dot per input: T = 7, 4C = 32
  for (const char* id : {"block0.ln_1", "block1.ln_2", "ln_f"}) {
    CAPTURE(id);
    const std::string section = section_of(page, id);
    CHECK(contains(section, std::string("before: the input of ") + id));
    CHECK(contains(section, std::string("after: values of ") + id));
  }
}

namespace {

// The text of every <span class="token"> of `page`.
std::vector<std::string> token_spans(const std::string& page) {
  std::vector<std::string> spans;
  const std::string open = "<span class=\"token\">";
  for (size_t at = page.find(open); at != std::string::npos; at = page.find(open, at + 1)) {
    const size_t start = at + open.size();
    spans.push_back(page.substr(start, page.find("</span>", start) - start));
  }
  return spans;
}

// The numbers of attribute `name` ("cy") in `markup`.
std::vector<double> attribute_values(const std::string& markup, const std::string& name) {
  std::vector<double> values;
  const std::string key = " " + name + "=\"";
  for (size_t at = markup.find(key); at != std::string::npos; at = markup.find(key, at + 1))
    values.push_back(std::stod(markup.substr(at + key.size())));
  return values;
}

// `prompt` walked through a model of `heads` heads, 2 blocks and a context of 128.
Walkthrough long_walkthrough(const std::string& prompt, int64_t heads, std::optional<int64_t> layer) {
  GPT model(tiny_gpt_config({.vocab_size = tiny_tokenizer().vocab_size(), .n_head = heads, .block_size = 128}), 43);
  WalkthroughOptions options;
  options.layer = layer;
  return walk_through(model, tiny_tokenizer(), prompt, options);
}

}  // namespace

TEST_CASE("render_html: each attention cell's exact value on hover, and written in the cell when it is big enough") {
  const Walkthrough walkthrough = page_walkthrough("");
  const std::string section = section_of(render_html(walkthrough), "block0.weights");
  const Stage& weights = *std::find_if(walkthrough.stages.begin(), walkthrough.stages.end(),
                                       [](const Stage& stage) { return stage.id == "block0.weights"; });
  const int64_t time = static_cast<int64_t>(walkthrough.tokens.size());
  for (size_t head = 0; head < weights.tensors.size(); ++head) {
    const std::vector<float> values = weights.tensors[head].value.to_vector<float>();
    const size_t start = section.find("<text x=\"8\" y=\"15\" font-weight=\"bold\">head " + std::to_string(head));
    REQUIRE(start != std::string::npos);
    const std::string heatmap = section.substr(start, section.find("</svg>", start) - start);
    CHECK(occurrences(heatmap, "<title>") == static_cast<size_t>(time * (time + 1) / 2));  // masked cells: none
    for (int64_t query = 0; query < time; ++query)
      for (int64_t key = 0; key <= query; ++key) {
        CAPTURE(query);
        CAPTURE(key);
        const std::string title = "<title>query " + std::to_string(query) + ", key " + std::to_string(key) + ": ";
        const size_t at = heatmap.find(title);
        REQUIRE(at != std::string::npos);
        // The title's number reads back as the very float32 the walk-through (and its JSON) holds.
        const float shown = std::strtof(heatmap.c_str() + at + title.size(), nullptr);
        CHECK(shown == values[static_cast<size_t>(query * time + key)]);
      }
  }
  // 7 positions: cells of 36 px, each weight written in it in the terminal's 4 decimals.
  char printed[32];
  std::snprintf(printed, sizeof printed, "%.4f", weights.tensors[1].value.to_vector<float>()[3 * time + 2]);
  CHECK(contains(section, std::string(">") + printed + "</text>"));
  CHECK(contains(section, ">1.0000</text>"));  // query 0 reads only itself
  CHECK(contains(section, "Hover a cell for its exact value."));
}

TEST_CASE("render_html: a 100-token prompt's heatmaps show all 100 positions of the chosen block, or say what they cut") {
  std::string prompt;
  while (prompt.size() < 100) prompt += "bad egg, ";
  prompt.resize(100);
  // 2 blocks x 3 stages x 4 heads x 100^2 = 240,000 cells: past the bound, every heatmap shows the first 70.
  const std::string page = render_html(long_walkthrough(prompt, 4, std::nullopt));
  const std::string note = "The heatmaps show the first 70 of the 100 positions: the page draws at most 120,000 "
                           "heatmap cells";
  CHECK(occurrences(page, note) == 1 + 2 * 3);  // the page's header and each attention section
  CHECK(contains(page, "its 24 heatmaps at all 100 positions would need 240,000. <code>--layer N</code> draws one "
                       "block's heads at all 100 positions."));
  CHECK(heatmap_cells(section_of(page, "block1.weights")) == 4 * 70 * 70);
  // --layer 1: one block's 120,000 cells, all of them, and no note.
  const std::string block = render_html(long_walkthrough(prompt, 4, 1));
  CHECK(!contains(block, "The heatmaps show the first"));
  for (const char* id : {"block1.scores", "block1.mask", "block1.weights"}) {
    CAPTURE(id);
    const std::string section = section_of(block, id);
    CHECK(heatmap_cells(section) == 4 * 100 * 100);
    CHECK(contains(section, "<title>query 99, key 99: "));
    CHECK(contains(section, "<div class=\"scroll\">"));  // a heatmap wider than the window scrolls in its box
  }
  CHECK(block.size() < 12'000'000);
}

TEST_CASE("render_html: a token's space is '␣' wherever a token is written, never a blank") {
  Walkthrough walkthrough = page_walkthrough(" ");  // "bad egg" + " ": spaces in tokens, predictions, the target
  walkthrough.causality.original = " ";
  const std::string page = render_html(walkthrough);
  const std::vector<std::string> spans = token_spans(page);
  REQUIRE(spans.size() > 30);
  size_t spaces = 0;
  for (const std::string& span : spans) {
    CAPTURE(span);
    CHECK(span.find(' ') == std::string::npos);
    CHECK(!span.empty());
    spaces += span.find("\u2423") != std::string::npos;
  }
  CHECK(spaces >= 4);  // the token table, the values tables' rows, the loss's target, the causality check
  CHECK(contains(section_of(page, "tokens"), "<span class=\"token\">\u2423</span></td><td>1</td>"));
  CHECK(contains(section_of(page, "block0.scores"), "\u2423</text>"));  // a heatmap's label
  CHECK(shown_token("a\tb\nc\r") == "a\u21e5b\u21b5c\u240d");
  CHECK(shown_token("") == "\u2205");
}

TEST_CASE("render_html: the per-head tables say which heads they show") {
  const std::string page = render_html(page_walkthrough(""));
  for (const char* id : {"block0.q", "block0.k", "block0.v", "block1.attend"}) {
    CAPTURE(id);
    CHECK(contains(section_of(page, id), "The tables: head 0 and head 1 of the stage's 2 heads (0 to 1)."));
  }
  CHECK(!contains(section_of(page, "block0.c_fc"), "The tables:"));
  GPT model(tiny_walkthrough_config(), 41);
  WalkthroughOptions options;
  options.head = 1;
  const std::string one_head = render_html(walk_through(model, tiny_tokenizer(), "bad egg", options));
  CHECK(contains(section_of(one_head, "block0.q"), "The tables: head 1 of the stage's 2 heads (0 to 1)."));
}

TEST_CASE("render_html: the GELU chart's legend sits below its plot, clear of every point") {
  const std::string gelu = section_of(render_html(page_walkthrough("")), "block0.gelu");
  const size_t chart = gelu.find("the GELU curve");
  const size_t legend = gelu.find("<g class=\"legend\">", chart);
  REQUIRE(legend != std::string::npos);
  const std::string plot = gelu.substr(chart, legend - chart);
  const std::string legend_part = gelu.substr(legend, gelu.find("</g>", legend) - legend);
  const std::vector<double> dots = attribute_values(plot, "cy");
  REQUIRE(dots.size() == 7 * 32);
  double lowest_point = *std::max_element(dots.begin(), dots.end());
  const size_t points = plot.find("points=\"");
  REQUIRE(points != std::string::npos);
  std::string curve = plot.substr(points + 8, plot.find('"', points + 8) - points - 8);
  for (size_t comma = curve.find(','); comma != std::string::npos; comma = curve.find(',', comma + 1))
    lowest_point = std::max(lowest_point, std::stod(curve.substr(comma + 1)));
  const std::vector<double> legend_rows = attribute_values(legend_part, "y");
  REQUIRE(!legend_rows.empty());
  // The legend's text is 11 px tall above its baseline: its top is below the lowest point.
  CHECK(*std::min_element(legend_rows.begin(), legend_rows.end()) - 11 > lowest_point);
}

TEST_CASE("render_html: the block diagram draws the model's configuration, each box a link to its stage's section") {
  // "block0." and the stages outside blocks, each linked from the diagram exactly once.
  auto check_diagram = [](const Walkthrough& walkthrough, const std::vector<std::string>& words) {
    const std::string page = render_html(walkthrough);
    const size_t start = page.find("<nav id=\"diagram\">");
    REQUIRE(start != std::string::npos);
    const std::string diagram = page.substr(start, page.find("</nav>", start) - start);
    CHECK(contains(diagram, "<svg class=\"block-diagram\""));
    CHECK(!contains(diagram, "<p>Also:"));  // the drawing has a box for every stage
    for (const Stage& stage : walkthrough.stages) {
      CAPTURE(stage.id);
      const bool drawn = !stage.id.starts_with("block") || stage.id.starts_with("block0.");
      CHECK(occurrences(diagram, "data-stage=\"" + stage.id + "\"") == (drawn ? 1 : 0));
    }
    size_t links = 0;
    for (size_t at = diagram.find("href=\"#"); at != std::string::npos; at = diagram.find("href=\"#", at + 1), ++links) {
      const std::string id = diagram.substr(at + 7, diagram.find('"', at + 7) - at - 7);
      CAPTURE(id);
      CHECK(occurrences(page, "id=\"" + id + "\"") == 1);
    }
    CHECK(links > walkthrough.stages.size() / 2);
    for (const std::string& word : words) {
      CAPTURE(word);
      CHECK(contains(diagram, word));
    }
    return diagram;
  };
  const std::string gpt2 = check_diagram(page_walkthrough("!"), {">LayerNorm<", ">wpe[t]<", ">GELU<", ">embed.sum<",
                                                                  ">residual_1<", ">residual_2<", "href=\"#loss\"",
                                                                  "the model has 2 blocks like it"});
  CHECK(!contains(gpt2, "RMSNorm"));
  CHECK(!contains(gpt2, "q_norm"));
  GPT llama(tiny_llama_walkthrough_config(), 59);
  const std::string llama_diagram =
      check_diagram(walk_through(llama, tiny_tokenizer(), "cafe", {}),
                    {">RMSNorm<", ">RoPE angles<", ">q_norm<", ">k_norm<", ">gate<", ">up<", ">swiglu<"});
  CHECK(!contains(llama_diagram, "LayerNorm"));
  CHECK(!contains(llama_diagram, "wpe[t]"));
  GPT nanochat(tiny_nanochat_walkthrough_config(), 61);
  check_diagram(walk_through(nanochat, tiny_tokenizer(), "cafe", {}), {">relu2<", ">relu(h)^2<"});
  // One block shown (--layer 1): it is the block drawn.
  GPT model(tiny_walkthrough_config(), 41);
  WalkthroughOptions options;
  options.layer = 1;
  const std::string one_block = render_html(walk_through(model, tiny_tokenizer(), "bad egg", options));
  CHECK(contains(one_block, "data-stage=\"block1.attend\""));
  CHECK(contains(one_block, "block 1: the model has 2 blocks like it"));
  // The course's models: one block of attention only; no block at all (a bigram), with nothing rotated.
  GPTConfig attention_only = tiny_walkthrough_config();
  attention_only.n_layer = 1;
  attention_only.mlp = nn::MlpKind::None;
  GPT attending(attention_only, 63);
  const std::string only = check_diagram(walk_through(attending, tiny_tokenizer(), "cafe", {}),
                                         {">residual_1<", "the only block of the model (x 1)"});
  CHECK(!contains(only, "residual_2"));
  CHECK(!contains(only, "ln_2"));
  GPTConfig bigram = attention_only;
  bigram.n_layer = 0;
  bigram.positional = PositionalEncoding::Rope;
  GPT table(bigram, 67);
  const std::string bigram_diagram =
      check_diagram(walk_through(table, tiny_tokenizer(), "cafe", {}), {">RoPE angles<", "no block: nothing to rotate"});
  CHECK(!contains(bigram_diagram, "rotate q, k"));
  CHECK(!contains(bigram_diagram, "residual stream"));
}

TEST_CASE("render_html: each block stage links the same stage in the other blocks") {
  const std::string page = render_html(page_walkthrough(""));
  CHECK(contains(section_of(page, "block1.q"),
                 "<nav class=\"blocks\">This stage in block <a href=\"#block0.q\" data-stage=\"block0.q\">0</a> "
                 "<strong>1</strong></nav>"));
  CHECK(!contains(section_of(page, "ln_f"), "<nav class=\"blocks\">"));
}
