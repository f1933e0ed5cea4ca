// The terminal report: every stage's title and id, the heatmaps, the tables.
#include <doctest/doctest.h>

#include <sstream>

#include "tinygpt/inspect/text_report.h"
#include "tests/inspect/walkthrough_fixture.h"

using namespace tg;
using namespace tg::inspect;

namespace {

Walkthrough tiny_walkthrough(const std::string& target) {
  GPTConfig config = tg::testing::tiny_walkthrough_config();
  config.init = InitScheme::XavierNormal;
  GPT model(config, 37);
  WalkthroughOptions options;
  options.target = target;
  options.model_description = "a tiny test model";
  return walk_through(model, tg::testing::tiny_tokenizer(), "ace bed", options);
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("render_text: every stage, the heatmaps and the tables") {
  const Walkthrough walkthrough = tiny_walkthrough("!");
  const std::string report = render_text(walkthrough);
  CHECK(contains(report, "a tiny test model"));
  for (const Stage& stage : walkthrough.stages) {
    CAPTURE(stage.id);
    CHECK(contains(report, stage.title + "  [" + stage.id + "]"));
    CHECK(contains(report, stage.formula));
  }
  // A heatmap row of the weights: position 0 attends only to itself (weight 1: the darkest
  // shade), every later key masked.
  CHECK(contains(report, "|@@______________|"));
  CHECK(contains(report, "masked (key after query)"));
  CHECK(contains(report, "Predictions: the top 5 next tokens"));
  CHECK(contains(report, "Loss on the target"));
  CHECK(contains(report, "perplexity"));
  CHECK(contains(report, "Gradients: one backward"));
  CHECK(contains(report, "block 0"));
  CHECK(contains(report, "Causality"));
  CHECK(contains(report, "(exactly 0: no position sees a later one)"));
  // With a target, each stage's gradient: its norm, and its values as the stage's.
  CHECK(contains(report, "  grad     dLoss/d(output): norm "));
  CHECK(contains(report, "  dLoss/d(head 0) (8, 4):"));
  // The attribution of the last prompt position's top token, one row per position up to it.
  CHECK(contains(report, "after position 6: gradient x input"));
  CHECK(contains(report, "\n     6 'd'   "));
  // Slices elide the middle columns of wide tensors (C = 8 shows 6, "...", 2).
  CHECK(contains(report, "   ..."));
}

TEST_CASE("render_text: fits a 100-column terminal (ASCII prompt) and leaves out the loss without a target") {
  const std::string report = render_text(tiny_walkthrough(""));
  std::istringstream lines(report);
  std::string line;
  size_t widest = 0;
  while (std::getline(lines, line)) widest = std::max(widest, line.size());
  CHECK(widest <= 100);
  CHECK(!contains(report, "Loss on the target"));
  CHECK(!contains(report, "dLoss/d("));
  CHECK(contains(report, "gradient x input"));
  CHECK(contains(report, "Causality"));
}
