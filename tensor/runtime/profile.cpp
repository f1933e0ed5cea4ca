#include "tinygpt/tensor/runtime/profile.h"

#include <omp.h>

#include <chrono>

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {

// Touched by the profiling thread only, while detail::profiling is set (and read
// by profile_record() after the steps).
struct Profiler {
  ProfileRecord record;
  double largest_gemm_flops = 0;
  ProfileScope* innermost = nullptr;  // the scope the next one opens inside
  ProfilePass pass = ProfilePass::forward;
};

// Set on the thread of the live ProfiledStep: only it records.
thread_local bool records_on_this_thread = false;

Profiler& profiler() {
  static Profiler instance;
  return instance;
}

int64_t now_nanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The row of (family, pass, role), added at the end when new: rows keep the
// order they were first seen in, so a step's forward GEMMs come out in model order.
int row_index(ProfileRecord& record, ProfileFamily family, ProfilePass pass, const char* role) {
  const std::string name = role ? role : "";
  if (const ProfileRow* row = record.row(family, pass, name)) return static_cast<int>(row - record.rows.data());
  record.rows.push_back(ProfileRow{family, pass, name});
  return static_cast<int>(record.rows.size() - 1);
}

}  // namespace

const char* profile_family_name(ProfileFamily family) {
  switch (family) {
    case ProfileFamily::gemm: return "gemm";
    case ProfileFamily::attention: return "attention";
    case ProfileFamily::layer_norm: return "layer norm";
    case ProfileFamily::rms_norm: return "rms norm";
    case ProfileFamily::gelu: return "gelu";
    case ProfileFamily::swiglu: return "swiglu";
    case ProfileFamily::relu_squared: return "relu^2";
    case ProfileFamily::cross_entropy: return "cross-entropy";
    case ProfileFamily::dropout: return "dropout";
    case ProfileFamily::rope: return "rope";
    case ProfileFamily::embedding: return "embedding";
    case ProfileFamily::adamw: return "adamw";
    case ProfileFamily::muon: return "muon";
    case ProfileFamily::elementwise: return "elementwise";
    case ProfileFamily::reduce: return "reduce";
    case ProfileFamily::copy: return "copy";
    case ProfileFamily::allocation: return "allocation";
    case ProfileFamily::free: return "free";
  }
  return "?";
}

const char* profile_pass_name(ProfilePass pass) {
  switch (pass) {
    case ProfilePass::forward: return "fwd";
    case ProfilePass::backward: return "bwd";
    case ProfilePass::update: return "update";
  }
  return "?";
}

int64_t ProfileRecord::covered_nanoseconds() const {
  int64_t total = 0;
  for (const ProfileRow& row : rows) total += row.nanoseconds;
  return total;
}

double ProfileRecord::flops() const {
  double total = 0;
  for (const ProfileRow& row : rows) total += row.flops;
  return total;
}

const ProfileRow* ProfileRecord::row(ProfileFamily family, ProfilePass pass, const std::string& role) const {
  for (const ProfileRow& candidate : rows)
    if (candidate.family == family && candidate.pass == pass && candidate.role == role) return &candidate;
  return nullptr;
}

bool detail::on_profiling_thread() { return records_on_this_thread && !omp_in_parallel(); }

void ProfileScope::add_gemm(const GemmShape& shape, int64_t batches) {
  flops_ += 2.0 * static_cast<double>(batches) * static_cast<double>(shape.m) * static_cast<double>(shape.n) *
            static_cast<double>(shape.k);
  gemm_ = shape;
}

void ProfileScope::begin(ProfileFamily family, const char* gemm_role) {
  Profiler& state = profiler();
  row_ = row_index(state.record, family, state.pass, gemm_role);
  parent_ = state.innermost;
  state.innermost = this;
  started_ = now_nanoseconds();
}

void ProfileScope::end() noexcept {
  const int64_t elapsed = now_nanoseconds() - started_;
  Profiler& state = profiler();
  ProfileRow& row = state.record.rows[static_cast<size_t>(row_)];
  row.calls += calls_;
  row.nanoseconds += elapsed - children_;
  row.flops += flops_;
  row.bytes += bytes_;
  const double one_product = 2.0 * static_cast<double>(gemm_.m) * static_cast<double>(gemm_.n) *
                             static_cast<double>(gemm_.k);
  if (one_product > state.largest_gemm_flops) {
    state.largest_gemm_flops = one_product;
    state.record.largest_gemm = gemm_;
  }
  if (parent_) parent_->children_ += elapsed;
  state.innermost = parent_;
}

ProfilePassScope::ProfilePassScope(ProfilePass pass) {
  if (!profiling_active()) return;
  active_ = true;
  previous_ = profiler().pass;
  profiler().pass = pass;
}

ProfilePassScope::~ProfilePassScope() {
  if (active_) profiler().pass = previous_;
}

ProfiledStep::ProfiledStep(bool record) : record_(record) {
  if (!record_) return;
  check(!detail::profiling.load(), "ProfiledStep: a step is already being profiled");
  profiler().pass = ProfilePass::forward;
  records_on_this_thread = true;
  detail::profiling.store(true);
  started_ = now_nanoseconds();
}

ProfiledStep::~ProfiledStep() {
  if (!record_) return;
  Profiler& state = profiler();
  state.record.steps += 1;
  state.record.step_nanoseconds += now_nanoseconds() - started_;
  detail::profiling.store(false);
  records_on_this_thread = false;
}

void reset_profile() {
  check(!detail::profiling.load(), "reset_profile: a step is being profiled");
  profiler() = Profiler();
}

ProfileRecord profile_record() { return profiler().record; }

}  // namespace tg
