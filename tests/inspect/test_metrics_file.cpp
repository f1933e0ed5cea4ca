// The metrics file read back (inspect/metrics_file.h): a resumed run's lines
// replace the abandoned ones, long files cross the reader's blocks, and the
// fast scanner of flat lines agrees with nlohmann on every line it accepts.
#include <doctest/doctest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/inspect/metrics_file.h"
#include "tinygpt/tensor/error.h"

using namespace tg;
using namespace tg::inspect;

namespace {

TrainingMetrics parse(const std::string& text) {
  std::istringstream lines(text);
  return parse_metrics(lines, "run/metrics.jsonl");
}

std::string step_line(int64_t iter, double loss) {
  return R"({"grad_norm":5.5,"iter":)" + std::to_string(iter) + R"(,"lr":0.001,"step_ms":60.1,"train_loss":)" +
         std::to_string(loss) + "}\n";
}

std::string eval_line(int64_t iter, double val_loss) {
  return R"({"eval":true,"iter":)" + std::to_string(iter) + R"(,"lr":0.001,"train_loss":3.0,"val_loss":)" +
         std::to_string(val_loss) + "}\n";
}

std::vector<int64_t> iterations(const std::deque<StepMetrics>& steps) {
  std::vector<int64_t> iters;
  for (const StepMetrics& step : steps) iters.push_back(step.iter);
  return iters;
}

}  // namespace

TEST_CASE("parse_metrics: a run resumed from an earlier step drops the abandoned steps after it") {
  std::string text;
  for (int64_t iter = 1; iter <= 6; ++iter) text += step_line(iter, 4.0);
  text += eval_line(5, 3.5);
  // Resumed from the checkpoint of step 3: steps 4 and 5 again, and an evaluation at 4; then killed.
  text += step_line(4, 2.0) + eval_line(4, 2.5) + step_line(5, 2.0);
  const TrainingMetrics metrics = parse(text);
  CHECK(iterations(metrics.steps) == std::vector<int64_t>{1, 2, 3, 4, 5});  // step 6 belonged to the first run
  CHECK(metrics.steps[2].train_loss == 4.0);
  CHECK(metrics.steps[3].train_loss == 2.0);
  CHECK(metrics.steps[4].train_loss == 2.0);
  REQUIRE(metrics.evals.size() == 1);  // evaluations are their own list: the one at 4 replaces the one at 5
  CHECK(metrics.evals[0].iter == 4);
  CHECK(metrics.evals[0].val_loss == 2.5);
}

TEST_CASE("parse_metrics: many lines across the reader's blocks, CRLF and no final newline") {
  std::string text;
  constexpr int64_t kSteps = 40000;  // about 3 MB: lines cross the 1 MB blocks
  for (int64_t iter = 1; iter <= kSteps; ++iter) {
    text += step_line(iter, static_cast<double>(iter % 97) / 8);
    if (iter == kSteps / 2) text += "\r\n \t\n";  // blank lines
  }
  text += std::string(R"({"iter":40001,"lr":0.001,"train_loss":1.5})") + "\r\n";
  text += R"({"iter":40002,"lr":0.001,"train_loss":1.25})";
  const TrainingMetrics metrics = parse(text);
  REQUIRE(metrics.steps.size() == static_cast<std::size_t>(kSteps + 2));
  for (int64_t iter = 1; iter <= kSteps; iter += 997) {
    CAPTURE(iter);
    CHECK(metrics.steps[static_cast<std::size_t>(iter - 1)].iter == iter);
    CHECK(metrics.steps[static_cast<std::size_t>(iter - 1)].train_loss ==
          std::stod(std::to_string(static_cast<double>(iter % 97) / 8)));
  }
  CHECK(metrics.steps.back().train_loss == 1.25);
}

TEST_CASE("parse_metrics: a line past 1 MB, and an eval that is not true or false, are refused by line") {
  const std::string first = step_line(1, 4.0);
  for (const int length : {3 << 20, (1 << 20) + 1000}) {  // past the limit, in three blocks or in two
    CHECK_THROWS_WITH_AS(parse(first + "{\"iter\": 2, \"note\": \"" + std::string(length, 'x') + "\"}\n"),
                         doctest::Contains("metrics 'run/metrics.jsonl' line 2: longer than 1 MB"), Error);
  }
  CHECK_THROWS_WITH_AS(parse(first + R"({"eval":1,"iter":2,"train_loss":3.0,"val_loss":3.1})" + "\n"),
                       doctest::Contains("line 2: \"eval\" must be true or false"), Error);
  CHECK_THROWS_WITH_AS(parse(first + R"({"eval":true,"iter":2,"lr":"high","train_loss":3.0,"val_loss":3.1})"),
                       doctest::Contains("line 2: no number \"lr\""), Error);
  // The same errors whichever path read the line: nested values go to nlohmann.
  CHECK_THROWS_WITH_AS(parse(R"({"iter":1,"lr":[0.1],"train_loss":2})"), doctest::Contains("line 1: no number \"lr\""),
                       Error);
  // A number beyond double's range, plotted or not, is what nlohmann refuses.
  for (const char* line :
       {R"({"iter":1,"lr":0.1,"train_loss":1e400})", R"({"iter":1,"lr":0.1,"train_loss":2,"x":-1e999})"}) {
    CAPTURE(line);
    CHECK_THROWS_WITH_AS(parse(std::string(line) + "\n"), doctest::Contains("line 1: not a JSON object"), Error);
  }
}

TEST_CASE("scan_flat_metrics_line: what it accepts, nlohmann reads the same; what it leaves, it leaves whole") {
  const std::vector<std::string> lines = {
      R"({"grad_norm":5.718293810844421,"iter":12,"lr":0.0005999999999998499,"step_ms":75.27549237953228,)"
      R"("tokens_per_s":10765.207077218265,"train_loss":5.213422424434573})",
      R"({"eval":true,"iter":250,"lr":0.0006,"tokens_per_s":0.0,"train_loss":4.2,"val_loss":4.3,)"
      R"("val_perplexity":73.7})",
      R"( { "iter" : 3 , "train_loss" : -0 , "lr" : 1E-3 , "eval" : false , "note" : "ok" , "x" : null } )",
      R"({"iter":1,"iter":2,"train_loss":2.5e+2,"lr":-0.0,"all_reduce_ms":1e-310})",
      R"({})",
      R"({"iter":18446744073709551616,"train_loss":123456789012345678901234567890,"lr":9007199254740993})",
  };
  for (const std::string& line : lines) {
    CAPTURE(line);
    const std::optional<MetricsLineFields> fast = scan_flat_metrics_line(line);
    REQUIRE(fast.has_value());
    CHECK(*fast == metrics_line_fields(nlohmann::json::parse(line)));
  }
  for (const char* line : {R"({"iter":1,"nested":{"a":1}})", R"({"iter":"\u0031"})", R"({"iter":01})",
                           R"({"iter":1,})", R"({"iter":1} x)", "[1]", R"({"iter":NaN})", R"({"iter":1)"}) {
    CAPTURE(line);
    CHECK_FALSE(scan_flat_metrics_line(line).has_value());
  }

  // Every line one edit away from a real one: where the scan answers, nlohmann agrees.
  std::mt19937 random(12345);
  const std::string alphabet = "{}[]\":,.-+eE0123456789 \t\\tfnul\x01\x7f\xc3";
  int accepted = 0;
  for (int trial = 0; trial < 30000; ++trial) {
    std::string line = lines[static_cast<std::size_t>(random() % lines.size())];
    const std::size_t at = random() % (line.size() + 1);
    const char c = alphabet[random() % alphabet.size()];
    switch (random() % 3) {
      case 0: if (at < line.size()) line.erase(at, 1); break;
      case 1: line.insert(at, 1, c); break;
      default: if (at < line.size()) line[at] = c;
    }
    const std::optional<MetricsLineFields> fast = scan_flat_metrics_line(line);
    if (!fast) continue;
    ++accepted;
    const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    CAPTURE(line);
    REQUIRE(parsed.is_object());
    CHECK(*fast == metrics_line_fields(parsed));
  }
  CHECK(accepted > 5000);
}
