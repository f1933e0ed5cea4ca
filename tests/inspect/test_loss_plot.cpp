// Reading a training run's metrics file back, its errors, and the picture.
#include <doctest/doctest.h>

#include <sstream>

#include "tinygpt/inspect/loss_plot.h"
#include "tinygpt/tensor/error.h"
#include "tests/inspect/picture_checks.h"

using namespace tg;
using namespace tg::inspect;
using namespace tg::testing;

namespace {

TrainingMetrics parse(const std::string& text) {
  std::istringstream lines(text);
  return parse_metrics(lines, "run/metrics.jsonl");
}

// The lines training/train_log.cpp writes: an evaluation before the first step, a
// step per iteration, another evaluation; then a resumed run repeating step 2.
const std::string kMetrics =
    R"({"eval":true,"iter":0,"lr":0.0,"tokens_per_s":0.0,"train_loss":4.2,"val_loss":4.3,"val_perplexity":73.7})"
    "\n"
    R"({"grad_norm":5.7,"iter":1,"lr":0.001,"step_ms":71.5,"tokens_per_s":10730.9,"train_loss":4.1})"
    "\n\n"
    R"({"grad_norm":5.5,"iter":2,"lr":0.002,"step_ms":60.1,"tokens_per_s":12766.3,"train_loss":3.9})"
    "\n"
    R"({"eval":true,"iter":2,"lr":0.002,"tokens_per_s":19024.8,"train_loss":3.5,"val_loss":3.6,"val_perplexity":36.6})"
    "\n"
    R"({"grad_norm":5.4,"iter":2,"lr":0.002,"step_ms":60.1,"tokens_per_s":12766.3,"train_loss":3.8})"
    "\n";

}  // namespace

TEST_CASE("parse_metrics: step and evaluation lines, by iteration, a repeated one replaced") {
  const TrainingMetrics metrics = parse(kMetrics);
  REQUIRE(metrics.steps.size() == 2);
  CHECK(metrics.steps[0].iter == 1);
  CHECK(metrics.steps[0].train_loss == 4.1);
  CHECK(metrics.steps[0].lr == 0.001);
  CHECK(metrics.steps[1].iter == 2);
  CHECK(metrics.steps[1].train_loss == 3.8);  // the resumed run's line
  REQUIRE(metrics.evals.size() == 2);
  CHECK(metrics.evals[0].iter == 0);
  CHECK(metrics.evals[1].iter == 2);
  CHECK(metrics.evals[1].train_loss == 3.5);
  CHECK(metrics.evals[1].val_loss == 3.6);
}

TEST_CASE("parse_metrics: a last line cut short (a killed run, a full disk) is skipped, as train --resume drops it") {
  const TrainingMetrics metrics = parse(kMetrics + R"({"grad_norm":5.3,"iter":3,"lr":0.003,"step_ms":6)");
  REQUIRE(metrics.steps.size() == 2);
  CHECK(metrics.steps[1].iter == 2);
  CHECK(metrics.evals.size() == 2);
  // Only the last line: the same text with a newline after it is an error (a damaged file, not a write in progress).
  CHECK_THROWS_WITH_AS(parse(kMetrics + R"({"grad_norm":5.3,"iter":3,"lr":0.003,"step_ms":6)" + "\n"),
                       doctest::Contains("line 7: not a JSON object"), Error);
}

TEST_CASE("parse_metrics and read_metrics: errors name the file, the line and what is wrong") {
  CHECK_THROWS_WITH_AS(parse("{\"iter\": 1, \"train_loss\": 2, \"lr\": 0}\n{\"iter\": 2, \"train_lo\n"),
                       doctest::Contains("metrics 'run/metrics.jsonl' line 2: not a JSON object: {\"iter\": 2"), Error);
  CHECK_THROWS_WITH_AS(parse("[1, 2]\n"), doctest::Contains("line 1: not a JSON object"), Error);
  CHECK_THROWS_WITH_AS(parse("\n{\"iter\": 3, \"lr\": 0.1}\n"),
                       doctest::Contains("metrics 'run/metrics.jsonl' line 2: no number \"train_loss\""), Error);
  CHECK_THROWS_WITH_AS(parse("{\"iter\": 3, \"eval\": true, \"train_loss\": 2}\n"),
                       doctest::Contains("line 1: no number \"val_loss\""), Error);
  CHECK_THROWS_WITH_AS(parse("{\"iter\": \"three\", \"train_loss\": 2, \"lr\": 0}"),
                       doctest::Contains("line 1: no number \"iter\""), Error);
  CHECK_THROWS_WITH_AS(parse("\n  \n"), doctest::Contains("metrics 'run/metrics.jsonl': no step or evaluation lines"),
                       Error);
  CHECK_THROWS_WITH_AS(read_metrics("tests/inspect/no-such-metrics.jsonl"),
                       doctest::Contains("metrics 'tests/inspect/no-such-metrics.jsonl': cannot open the file"), Error);
}

TEST_CASE("render_loss_plot: every series, the final val loss in the title, a standalone SVG") {
  const std::string picture = render_loss_plot(parse(kMetrics), "tiny <run>");
  CHECK(markup_problem(picture) == "");
  CHECK(picture.find("xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(picture.find("tiny &lt;run&gt;: val loss 3.6 at iteration 2") != std::string::npos);
  for (const char* name :
       {"train loss (every step)", "train loss (evaluation)", "val loss (evaluation)", "learning rate", "iteration"})
    CHECK(picture.find(name) != std::string::npos);
  CHECK(occurrences(picture, "<polyline ") == 4);
  CHECK(occurrences(picture, "<circle ") == 4);  // two evaluations, train and val

  const std::string steps_only = render_loss_plot(parse("{\"iter\": 1, \"train_loss\": 2.5, \"lr\": 0.1}"), "run");
  CHECK(markup_problem(steps_only) == "");
  CHECK(steps_only.find("run: train loss 2.5 at iteration 1") != std::string::npos);
  CHECK(occurrences(steps_only, "<polyline ") == 2);
}

TEST_CASE("render_loss_plot: the loss axis says it is logarithmic; a run of 0 or 1 steps gets whole iterations") {
  for (const char* metrics : {"{\"iter\": 1, \"train_loss\": 2.5, \"lr\": 0.1}",
                              R"({"eval":true,"iter":0,"lr":0.0,"tokens_per_s":0.0,"train_loss":4.2,"val_loss":4.3})"}) {
    CAPTURE(metrics);
    const std::string picture = render_loss_plot(parse(metrics), "run");
    CHECK(markup_problem(picture) == "");
    CHECK(picture.find("loss (cross-entropy, nats; log scale)") != std::string::npos);
    // The x ticks are the labels drawn below the plot, centred: 0 to 10, every one whole.
    for (const char* tick : {">0</text>", ">1</text>", ">10</text>"}) CHECK(picture.find(tick) != std::string::npos);
    CHECK(picture.find(">0.5</text>") == std::string::npos);
    CHECK(picture.find(">0.9</text>") == std::string::npos);
  }
}
