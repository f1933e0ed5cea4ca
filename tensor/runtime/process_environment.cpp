#include "tinygpt/tensor/runtime/process_environment.h"

#include <cblas.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>

#include "tinygpt/tensor/runtime/isa.h"
#include "tinygpt/tensor/runtime/thread_governor.h"

namespace tg {

namespace {

constexpr const char* kMarker = "TINYGPT_ENVIRONMENT";
constexpr const char* kSpinCount = "500";
// In the marker's value: what tinygpt set, and OpenBLAS's own pick it replaced.
constexpr const char* kSpinSet = "spin";
constexpr const char* kBlasReplaced = "blas-replaced:";
constexpr const char* kAskedFor = "(asked-for)";  // the replaced core came from OPENBLAS_CORETYPE

const char* variable(const char* name) { return std::getenv(name); }

// A variable as it was when the program started, which is what the OpenMP
// runtime and OpenBLAS read (setenv afterwards changes nothing for them):
// /proc/self/environ keeps the environment the process was started with.
std::optional<std::string> at_start(const std::string& name) {
  static const std::map<std::string, std::string> start = [] {
    std::map<std::string, std::string> variables;
    std::ifstream environ("/proc/self/environ", std::ios::binary);
    for (std::string entry; std::getline(environ, entry, '\0');)
      if (const size_t equals = entry.find('='); equals != std::string::npos)
        variables.emplace(entry.substr(0, equals), entry.substr(equals + 1));
    return variables;
  }();
  const auto found = start.find(name);
  if (found == start.end()) return std::nullopt;
  return found->second;
}

bool is_avx512_blas_core(const std::string& core) {
  return core == "SkylakeX" || core == "Cooperlake" || core == "SapphireRapids";
}

// Cooperlake's kernels are SkylakeX's plus bf16 ones that need AVX512-BF16.
const char* best_avx512_blas_core() { return __builtin_cpu_supports("avx512bf16") ? "Cooperlake" : "SkylakeX"; }

}  // namespace

void tune_process_environment(char** argv) {
  if (variable(kMarker)) return;  // the second start, or "keep"
  std::string tuned;
  // An OPENBLAS_CORETYPE already set is replaced too when it names narrower
  // kernels than the CPU has: machines come with one set for all their users
  // (OPENBLAS_CORETYPE=Haswell on the Zen 5 machines this was measured on).
  const std::string blas_core = openblas_get_corename();
  const bool replace_core = cpu_has_avx512() && !is_avx512_blas_core(blas_core);
  // The short spin only where the thread count cannot follow the load.
  if (!variable("OMP_WAIT_POLICY") && !variable("GOMP_SPINCOUNT") && threads_fixed_by_user()) {
    setenv("GOMP_SPINCOUNT", kSpinCount, 1);
    tuned = kSpinSet;
  }
  const std::optional<std::string> asked_core =
      variable("OPENBLAS_CORETYPE") ? std::optional<std::string>(variable("OPENBLAS_CORETYPE")) : std::nullopt;
  if (replace_core) {
    const bool asked_for = asked_core.has_value();
    setenv("OPENBLAS_CORETYPE", best_avx512_blas_core(), 1);
    // Appended piece by piece: GCC 12 reads `"" + std::string(...)` as a possibly overlapping copy (-Wrestrict).
    if (!tuned.empty()) tuned += ' ';
    tuned += kBlasReplaced;
    tuned += blas_core;
    if (asked_for) tuned += kAskedFor;
  }
  if (tuned.empty()) return;
  setenv(kMarker, tuned.c_str(), 1);
  execv("/proc/self/exe", argv);
  // No exec (no /proc, say): run as started, and say so in the info line.
  if (tuned.find(kSpinSet) != std::string::npos) unsetenv("GOMP_SPINCOUNT");
  if (tuned.find(kBlasReplaced) != std::string::npos) {  // the user's value back, if there was one
    if (asked_core)
      setenv("OPENBLAS_CORETYPE", asked_core->c_str(), 1);
    else
      unsetenv("OPENBLAS_CORETYPE");
  }
  setenv(kMarker, "restart-failed", 1);
}

std::string process_environment_info() {
  const std::string marker = at_start(kMarker).value_or("");
  std::string info = std::string("tinygpt kernels ") + isa_name(active_isa()) +
                     (variable("TINYGPT_ISA") ? " (your TINYGPT_ISA)" : "") + "; OpenBLAS kernels " +
                     openblas_get_corename();
  if (const size_t at = marker.find(kBlasReplaced); at != std::string::npos) {
    std::string replaced = marker.substr(at + std::string(kBlasReplaced).size());
    const bool asked_for = replaced.ends_with(kAskedFor);
    replaced = replaced.substr(0, replaced.size() - (asked_for ? std::string(kAskedFor).size() : 0));
    info += asked_for ? " (chosen by tinygpt over OPENBLAS_CORETYPE=" + replaced +
                            " on this AVX-512 CPU; TINYGPT_ENVIRONMENT=keep keeps yours)"
                      : " (chosen by tinygpt: the library picked " + replaced + " on this AVX-512 CPU)";
  } else if (at_start("OPENBLAS_CORETYPE")) {
    info += " (your OPENBLAS_CORETYPE)";
  }
  info += "; ";
  if (const auto policy = at_start("OMP_WAIT_POLICY"))
    info += "idle threads follow your OMP_WAIT_POLICY=" + *policy;
  else if (const auto spins = at_start("GOMP_SPINCOUNT"))
    info += "idle threads spin " + *spins + " times, then sleep" +
            (marker.find(kSpinSet) != std::string::npos ? " (set by tinygpt)" : " (your GOMP_SPINCOUNT)");
  else
    info += "idle threads spin 300000 times, then sleep (libgomp's default)";
  const std::string why_not = why_threads_do_not_adapt();
  if (why_not.empty())
    info += "; one thread fewer while other processes keep a CPU busy (TINYGPT_THREADS=fixed keeps them all)";
  else if (why_not != "not started")
    info += "; thread count fixed (" + why_not + ")";
  if (variable(kMarker) && std::string(variable(kMarker)) == "restart-failed")
    info += "; tinygpt could not restart itself with its settings";
  return info;
}

}  // namespace tg
