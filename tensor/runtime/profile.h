// The profiler: where the time of a training step goes, by op family.
//
// Each op of a step opens a scope around its work and says how much work it was:
//
//   ProfileScope scope(ProfileFamily::layer_norm);
//   ... checks, allocations, the kernel ...
//   scope.add_bytes_of(x, weight, bias, y, mean, rstd);   // read + written, each once
//
// While a ProfiledStep is alive (tinygpt train --profile, bench_train_step
// --profile), a scope adds one call, its time and its FLOPs or bytes to the row
// of its (family, pass, GEMM role). Otherwise it costs one relaxed atomic load.
//
// Self time: a scope opened inside another (an allocation inside a GEMM, a copy
// inside LayerNorm) is counted in its own row and subtracted from the enclosing
// one, so no time is counted twice and the rows add up to the time they cover.
// What no scope covers (autograd's bookkeeping, shape checks, views, drawing the
// batch, the profiler's own clock reads) is the step's "other" time.
//
// Only the thread that started the step records, and only outside OpenMP
// parallel regions: ops are called from that thread and split their work among
// threads inside, so a scope times the whole parallel kernel, never a share of it.
//
// The pass of a row is set by the innermost ProfilePassScope: forward unless
// backward() (autograd/backward.cpp: backward, which includes the forward an
// activation checkpoint recomputes) or the optimizer (nn/optim/: update) set it.
//
// The families name ops of every layer (GELU is nn's, the GEMM roles the GPT's):
// this header is the one place in tensor/ that knows them, because the layers
// above report into it. The table: inspect/profile_table.h.
#pragma once
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>


namespace tg {

enum class ProfileFamily : uint8_t {
  gemm,           // matrix products of autograd's matmul, one row per role ("attn.qkv") and pass
  attention,      // fused causal attention, its per-head block products included (nn/functional/attention.cpp)
  layer_norm,
  rms_norm,
  gelu,
  swiglu,
  relu_squared,
  cross_entropy,
  dropout,
  rope,
  embedding,      // token rows gathered, their gradients added back (tensor/index.cpp)
  adamw,          // the fused update (nn/functional/adamw.cpp)
  muon,           // Muon's update: momentum and the Newton-Schulz products (nn/functional/muon.cpp)
  elementwise,    // add, mul, ..., where, fill, add_, mul_ (tensor/elementwise.cpp, tensor/factory.cpp)
  reduce,         // sum, mean, var (tensor/reduce.cpp), the gradient norm (nn/optim/clip.cpp)
  copy,           // copy_, so clone, contiguous and reshape's copies (tensor/view.cpp)
  allocation,     // Storage::allocate
  free,           // a buffer given back when its last tensor dies (Storage's destructor)
};
inline constexpr int kProfileFamilies = static_cast<int>(ProfileFamily::free) + 1;
const char* profile_family_name(ProfileFamily family);  // "layer norm"

enum class ProfilePass : uint8_t { forward, backward, update };
const char* profile_pass_name(ProfilePass pass);  // "fwd", "bwd", "update"

// One matrix product as BLAS sees it: out (m, n) = (m, k) @ (k, n).
struct GemmShape {
  int64_t m = 0, n = 0, k = 0;
};

// What the steps spent in one (family, pass, role).
struct ProfileRow {
  ProfileFamily family;
  ProfilePass pass;
  std::string role;         // GEMM rows: what the product is for ("mlp.c_fc"); "" otherwise
  int64_t calls = 0;
  int64_t nanoseconds = 0;  // self time
  double flops = 0;         // GEMM and attention: 2 per multiply-add
  double bytes = 0;         // memory-bound families: read + written, each tensor once; allocation: allocated
};

struct ProfileRecord {
  int64_t steps = 0;
  int64_t step_nanoseconds = 0;  // wall time of the steps, from ProfiledStep
  std::vector<ProfileRow> rows;  // in the order they were first seen
  GemmShape largest_gemm;        // of the GEMM call with the most FLOPs
  int64_t covered_nanoseconds() const;  // sum of the rows
  double flops() const;                 // sum of the rows
  // The row of (family, pass, role), or nullptr when nothing ran there.
  const ProfileRow* row(ProfileFamily family, ProfilePass pass, const std::string& role = "") const;
};

namespace detail {
inline std::atomic<bool> profiling{false};
bool on_profiling_thread();  // the thread of the ProfiledStep, outside a parallel region
}  // namespace detail

inline bool profiling_active() {
  return detail::profiling.load(std::memory_order_relaxed) && detail::on_profiling_thread();
}

class ProfileScope {
 public:
  // gemm_role: what a GEMM is for (a string literal, or nullptr for "unlabelled").
  explicit ProfileScope(ProfileFamily family, const char* gemm_role = nullptr) {
    if (profiling_active()) begin(family, gemm_role);
  }
  ~ProfileScope() {
    if (row_ >= 0) end();
  }
  ProfileScope(const ProfileScope&) = delete;
  ProfileScope& operator=(const ProfileScope&) = delete;

  // Bytes of the tensors read and written, each once; undefined tensors add nothing.
  // (Templates, so that the profiler needs no Tensor: the core's storage uses it.)
  template <class... Tensors>
  void add_bytes_of(const Tensors&... tensors) {
    if (row_ >= 0) bytes_ += (0.0 + ... + byte_count(tensors));
  }
  void add_bytes(double bytes) { bytes_ += bytes; }
  void add_flops(double flops) { flops_ += flops; }
  // `batches` products of one shape: 2 m n k FLOPs each.
  void add_gemm(const GemmShape& shape, int64_t batches);
  // The scope stands for `calls` calls (one scope timing two products run at once: 2).
  void count_as_calls(int64_t calls) { calls_ = calls; }

 private:
  template <class TensorLike>
  static double byte_count(const TensorLike& x) {
    return x.defined() ? static_cast<double>(x.numel()) * static_cast<double>(dtype_size(x.dtype())) : 0.0;
  }
  void begin(ProfileFamily family, const char* gemm_role);
  void end() noexcept;

  int row_ = -1;  // -1: not recording
  ProfileScope* parent_ = nullptr;
  int64_t started_ = 0, children_ = 0;  // nanoseconds
  int64_t calls_ = 1;
  double flops_ = 0, bytes_ = 0;
  GemmShape gemm_;
};

// Sets the pass of the scopes opened during its lifetime (when recording).
class ProfilePassScope {
 public:
  explicit ProfilePassScope(ProfilePass pass);
  ~ProfilePassScope();
  ProfilePassScope(const ProfilePassScope&) = delete;
  ProfilePassScope& operator=(const ProfilePassScope&) = delete;

 private:
  bool active_ = false;
  ProfilePass previous_ = ProfilePass::forward;
};

// One profiled step: records on this thread from construction to destruction
// and adds the wall time in between to the step total. With record = false it
// does nothing (a warm-up step). One at a time (else tg::Error).
class ProfiledStep {
 public:
  explicit ProfiledStep(bool record = true);
  ~ProfiledStep();
  ProfiledStep(const ProfiledStep&) = delete;
  ProfiledStep& operator=(const ProfiledStep&) = delete;

 private:
  bool record_;
  int64_t started_ = 0;
};

void reset_profile();            // forgets every step recorded so far
ProfileRecord profile_record();  // what the steps since the last reset spent

}  // namespace tg
