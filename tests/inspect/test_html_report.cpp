// The web page: every stage an anchor and a diagram link, a heatmap per head of
// every attention stage, the tables, escaped text, well-formed markup and nothing
// fetched from the network. (tests/cli/test_html_report.sh opens it in Chromium.)
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tinygpt/inspect/html_report.h"
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
    CHECK(contains(section, "<span class=\"token\">" + svg::escape(token.text) + "</span></td><td>" +
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
  // Both heads' colour bars end at the shared smallest and largest value.
  CHECK(occurrences(shared, ">" + number(largest, 3) + "</text>") == 2);
  CHECK(occurrences(shared, ">" + number(smallest, 3) + "</text>") == 2);
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
