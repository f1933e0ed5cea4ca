// inspect/profile_table.h: the table of a made-up record, whose numbers are
// known: rows in their order with their per-step figures, other, total, and
// the GEMM bound's arithmetic.
#include <doctest/doctest.h>

#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/inspect/profile_table.h"

using namespace tg;

namespace {

// Two steps of 10 ms: a GEMM forward and backward, a LayerNorm forward; 1 ms is "other".
ProfileRecord two_steps() {
  ProfileRecord record;
  record.steps = 2;
  record.step_nanoseconds = 20'000'000;
  record.rows = {
      {ProfileFamily::layer_norm, ProfilePass::forward, "", 4, 2'000'000, 0, 8e6},            // 4 GB/s
      {ProfileFamily::gemm, ProfilePass::backward, "mlp.c_fc", 4, 10'000'000, 1e9, 0},      // 100 GFLOP/s
      {ProfileFamily::gemm, ProfilePass::forward, "mlp.c_fc", 2, 6'000'000, 0.5e9, 0},
      {ProfileFamily::allocation, ProfilePass::forward, "", 6, 0, 0, 3e6},
  };
  record.largest_gemm = {64, 256, 32};
  return record;
}

std::string table(const ProfileRecord& record, double sgemm_gflops) {
  std::ostringstream out;
  inspect::print_profile_table(out, record, {record.largest_gemm, sgemm_gflops, 5});
  return out.str();
}

// The lines of `text`, runs of spaces squeezed to one.
std::vector<std::string> squeezed_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    std::string squeezed;
    for (const char c : line)
      if (c != ' ' || (!squeezed.empty() && squeezed.back() != ' ')) squeezed += c;
    lines.push_back(squeezed);
  }
  return lines;
}

// The number of the (squeezed) line that starts with `start`.
size_t line_number(const std::string& text, const std::string& start) {
  const std::vector<std::string> lines = squeezed_lines(text);
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].rfind(start, 0) == 0) return i;
  FAIL("no line starting with '", start, "' in:\n", text);
  return 0;
}

std::string line_of(const std::string& text, const std::string& start) {
  return squeezed_lines(text)[line_number(text, start)];
}

}  // namespace

TEST_CASE("print_profile_table: per-step rows, GEMMs first by role and pass, then other and total") {
  const std::string text = table(two_steps(), 50);
  CHECK(line_of(text, "profile of 2 steps").size() > 0);
  CHECK(line_of(text, "op ") == "op pass calls/step ms/step share work/step speed");
  CHECK(line_of(text, "gemm mlp.c_fc fwd") == "gemm mlp.c_fc fwd 1 3.000 30.0% 0.250 GFLOP 83.3 GFLOP/s");
  CHECK(line_of(text, "gemm mlp.c_fc bwd") == "gemm mlp.c_fc bwd 2 5.000 50.0% 0.500 GFLOP 100.0 GFLOP/s");
  CHECK(line_of(text, "layer norm") == "layer norm fwd 2 1.000 10.0% 4.00 MB 4.0 GB/s");
  CHECK(line_of(text, "allocation") == "allocation fwd 3 0.000 0.0% 1.50 MB");  // no speed for allocations
  CHECK(line_of(text, "other") == "other 1.000 10.0%");
  CHECK(line_of(text, "total") == "total 10.000 100.0% 0.750 GFLOP 75.0 GFLOP/s");
  CHECK(line_number(text, "gemm mlp.c_fc fwd") == 2);  // after the title and the header,
  CHECK(line_number(text, "gemm mlp.c_fc bwd") == 3);  // though the record holds the backward first
  CHECK(line_number(text, "layer norm") == 4);
}

TEST_CASE("print_profile_table: the GEMM bound is the step's FLOPs at the measured sgemm speed") {
  const std::string text = table(two_steps(), 50);  // 0.75 GFLOP per step at 50 GFLOP/s: 15 ms
  CHECK(line_of(text, "matrix products") == "matrix products: 0.750 GFLOP per step (gemm rows 0.750, attention 0.000)");
  CHECK(line_of(text, "sgemm on this machine").find("50.0 GFLOP/s on (64 x 32) @ (32 x 256)") != std::string::npos);
  CHECK(line_of(text, "GEMM bound") == "GEMM bound 15.0 ms, step 10.0 ms: the step runs at 150% of its GEMM bound");
  CHECK(table(two_steps(), 0).find("GEMM bound") == std::string::npos);  // no speed, no bound
}

TEST_CASE("print_profile_table: a record without steps says so") {
  CHECK(table(ProfileRecord(), 100) == "profile: no step was profiled\n");
}
