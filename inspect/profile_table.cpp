#include "tinygpt/inspect/profile_table.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::inspect {

namespace {

constexpr ProfilePass kPasses[] = {ProfilePass::forward, ProfilePass::backward, ProfilePass::update};

template <class... Values>
std::string format(const char* pattern, Values... values) {
  char text[160];
  std::snprintf(text, sizeof text, pattern, values...);
  return text;
}

std::string without_trailing_spaces(std::string text) {
  text.erase(text.find_last_not_of(' ') + 1);
  return text;
}

std::string row_label(const ProfileRow& row) {
  if (row.family != ProfileFamily::gemm) return profile_family_name(row.family);
  return std::string("gemm ") + (row.role.empty() ? "unlabelled" : row.role);
}

// GEMM rows by role in the order the roles were first seen (the forward's, so
// model order), each role's passes in order; then every other family by pass.
std::vector<const ProfileRow*> table_order(const ProfileRecord& record) {
  std::vector<std::string> roles;
  for (const ProfileRow& row : record.rows)
    if (row.family == ProfileFamily::gemm && std::find(roles.begin(), roles.end(), row.role) == roles.end())
      roles.push_back(row.role);
  std::vector<const ProfileRow*> order;
  const auto add = [&](ProfileFamily family, const std::string& role) {
    for (const ProfilePass pass : kPasses)
      if (const ProfileRow* row = record.row(family, pass, role)) order.push_back(row);
  };
  for (const std::string& role : roles) add(ProfileFamily::gemm, role);
  for (int family = 1; family < kProfileFamilies; ++family) add(static_cast<ProfileFamily>(family), "");
  return order;
}

// Per step: FLOPs as GFLOP, else bytes as MB; "" for none.
std::string work_text(double flops, double bytes, double steps) {
  if (flops > 0) return format("%.3f GFLOP", flops / steps / 1e9);
  if (bytes > 0) return format("%.2f MB", bytes / steps / 1e6);
  return "";
}

// FLOPs or bytes per nanosecond are GFLOP/s or GB/s. Allocations have bytes but no speed.
std::string speed_text(const ProfileRow& row) {
  if (row.nanoseconds <= 0) return "";
  const double nanoseconds = static_cast<double>(row.nanoseconds);
  if (row.flops > 0) return format("%.1f GFLOP/s", row.flops / nanoseconds);
  if (row.bytes > 0 && row.family != ProfileFamily::allocation) return format("%.1f GB/s", row.bytes / nanoseconds);
  return "";
}

// calls per step: whole when every step made the same calls, else two decimals.
std::string calls_text(int64_t calls, int64_t steps) {
  if (calls % steps == 0) return std::to_string(calls / steps);
  return format("%.2f", static_cast<double>(calls) / static_cast<double>(steps));
}

}  // namespace

SgemmSpeed measure_sgemm(const GemmShape& shape, int min_repeats) {
  SgemmSpeed speed{shape, 0, 0};
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0) return speed;
  const Tensor a = full({shape.m, shape.k}, 0.5, DType::Float32);
  const Tensor b = full({shape.k, shape.n}, 0.25, DType::Float32);
  const Tensor c = Tensor::empty({shape.m, shape.n}, DType::Float32);
  const auto multiply = [&] {
    cpu::gemm(false, false, shape.m, shape.n, shape.k, 1.0f, a.data<float>(), shape.k, b.data<float>(), shape.n, 0.0f,
              c.data<float>(), shape.n);
  };
  multiply();  // untimed: BLAS's threads wake, c's pages are mapped
  constexpr double kMeasuringSeconds = 0.2;
  double best_seconds = INFINITY, total_seconds = 0;
  while (speed.repeats < min_repeats || total_seconds < kMeasuringSeconds) {
    const auto started = std::chrono::steady_clock::now();
    multiply();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    best_seconds = std::min(best_seconds, seconds);
    total_seconds += seconds;
    speed.repeats += 1;
  }
  const double flops = 2.0 * static_cast<double>(shape.m) * static_cast<double>(shape.n) * static_cast<double>(shape.k);
  speed.gflops = flops / best_seconds / 1e9;
  return speed;
}

void print_profile_table(std::ostream& out, const ProfileRecord& record, const SgemmSpeed& sgemm) {
  if (record.steps == 0) {
    out << "profile: no step was profiled\n";
    return;
  }
  const double steps = static_cast<double>(record.steps);
  const double step_nanoseconds = static_cast<double>(record.step_nanoseconds);
  const std::vector<const ProfileRow*> rows = table_order(record);
  size_t label_width = 14;
  for (const ProfileRow* row : rows) label_width = std::max(label_width, row_label(*row).size());
  const int width = static_cast<int>(label_width);
  const auto line = [&](const std::string& label, const std::string& pass, const std::string& calls,
                        double nanoseconds, const std::string& work, const std::string& speed) {
    out << without_trailing_spaces(format("%-*s  %-6s %10s %9.3f %6.1f%% %13s %15s", width, label.c_str(),
                                          pass.c_str(), calls.c_str(), nanoseconds / steps / 1e6,
                                          100.0 * nanoseconds / step_nanoseconds, work.c_str(), speed.c_str()))
        << "\n";
  };

  out << "profile of " << record.steps << " step" << (record.steps == 1 ? "" : "s")
      << ", per step (self time: an op run inside another is counted in its own row only)\n";
  out << format("%-*s  %-6s %10s %9s %7s %13s %15s", width, "op", "pass", "calls/step", "ms/step", "share", "work/step",
                "speed")
      << "\n";
  double gemm_flops = 0;
  for (const ProfileRow* row : rows) {
    line(row_label(*row), profile_pass_name(row->pass), calls_text(row->calls, record.steps),
         static_cast<double>(row->nanoseconds), work_text(row->flops, row->bytes, steps), speed_text(*row));
    if (row->family == ProfileFamily::gemm) gemm_flops += row->flops;
  }
  line("other", "", "", step_nanoseconds - static_cast<double>(record.covered_nanoseconds()), "", "");
  const double flops = record.flops();
  line("total", "", "", step_nanoseconds, work_text(flops, 0, steps),
       flops > 0 ? format("%.1f GFLOP/s", flops / step_nanoseconds) : "");
  if (flops <= 0 || sgemm.gflops <= 0) return;

  const double bound_ms = flops / steps / sgemm.gflops / 1e6;
  const double step_ms = step_nanoseconds / steps / 1e6;
  out << format("matrix products: %.3f GFLOP per step (gemm rows %.3f, attention %.3f)\n", flops / steps / 1e9,
                gemm_flops / steps / 1e9, (flops - gemm_flops) / steps / 1e9);
  out << format("sgemm on this machine: %.1f GFLOP/s on (%lld x %lld) @ (%lld x %lld), the step's largest GEMM, "
                "%d threads, best of %d\n",
                sgemm.gflops, static_cast<long long>(sgemm.shape.m), static_cast<long long>(sgemm.shape.k),
                static_cast<long long>(sgemm.shape.k), static_cast<long long>(sgemm.shape.n), num_threads(),
                sgemm.repeats);
  out << format("GEMM bound %.1f ms, step %.1f ms: the step runs at %.0f%% of its GEMM bound\n", bound_ms, step_ms,
                100.0 * bound_ms / step_ms);
}

}  // namespace tg::inspect
