#include "tinygpt/tensor/runtime/process_environment.h"

#include <cblas.h>
#include <cpuid.h>
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

// AMD's family 25 (0x19) is Zen 3 and Zen 4; of the two only Zen 4 has AVX-512.
bool is_zen4() {
  if (!__builtin_cpu_is("amd") || !cpu_has_avx512()) return false;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid(1, &eax, &ebx, &ecx, &edx)) return false;
  const unsigned base_family = (eax >> 8) & 0xf, extended_family = (eax >> 20) & 0xff;
  return base_family + (base_family == 0xf ? extended_family : 0) == 0x19;
}

}  // namespace

std::optional<BlasKernelChoice> preferred_blas_kernels() {
  if (!cpu_has_avx512()) return std::nullopt;  // AVX2 CPUs: OpenBLAS's own pick (Haswell, Zen) is the fastest it has
  if (is_zen4())
    return BlasKernelChoice{"Zen", "Zen 4 runs AVX-512 on 256-bit units, and OpenBLAS's AVX2 kernels for Zen run the GPT's products faster there"};
  if (__builtin_cpu_supports("avx512bf16"))
    return BlasKernelChoice{"Cooperlake", "the widest kernels for this CPU's AVX-512 with BF16"};
  return BlasKernelChoice{"SkylakeX", "the widest kernels for this CPU's AVX-512"};
}

namespace {

// The choice's words for the info line when the kernels in use are not the ones it names.
std::string would_choose_note() {
  const std::optional<BlasKernelChoice> choice = preferred_blas_kernels();
  if (!choice || choice->core == openblas_get_corename()) return "";
  return "; tinygpt would choose " + choice->core + ": " + choice->reason;
}

}  // namespace

void tune_process_environment(char** argv) {
  if (variable(kMarker)) return;  // the second start, or "keep"
  std::string tuned;
  // OpenBLAS picks its kernels by CPU model: on a CPU it does not know (Debian's 0.3.21 on Zen 5)
  // it falls back to narrower ones, and on Zen 4 it picks the AVX-512 ones, which are slower there.
  // An OPENBLAS_CORETYPE the user set is theirs, and wins (the info line says what tinygpt would choose).
  const std::string blas_core = openblas_get_corename();
  const std::optional<BlasKernelChoice> choice = preferred_blas_kernels();
  const bool replace_core = !variable("OPENBLAS_CORETYPE") && choice && choice->core != blas_core;
  // The short spin only where the thread count cannot follow the load.
  if (!variable("OMP_WAIT_POLICY") && !variable("GOMP_SPINCOUNT") && threads_fixed_by_user()) {
    setenv("GOMP_SPINCOUNT", kSpinCount, 1);
    tuned = kSpinSet;
  }
  if (replace_core) {
    setenv("OPENBLAS_CORETYPE", choice->core.c_str(), 1);
    // Appended piece by piece: GCC 12 reads `"" + std::string(...)` as a possibly overlapping copy (-Wrestrict).
    if (!tuned.empty()) tuned += ' ';
    tuned += kBlasReplaced;
    tuned += blas_core;
  }
  if (tuned.empty()) return;
  setenv(kMarker, tuned.c_str(), 1);
  execv("/proc/self/exe", argv);
  // No exec (no /proc, say): run as started, and say so in the info line.
  if (tuned.find(kSpinSet) != std::string::npos) unsetenv("GOMP_SPINCOUNT");
  if (tuned.find(kBlasReplaced) != std::string::npos) unsetenv("OPENBLAS_CORETYPE");
  setenv(kMarker, "restart-failed", 1);
}

std::string process_environment_info() {
  const std::string marker = at_start(kMarker).value_or("");
  std::string info = std::string("tinygpt kernels ") + isa_name(active_isa()) +
                     (variable("TINYGPT_ISA") ? " (your TINYGPT_ISA)" : "") + "; OpenBLAS kernels " +
                     openblas_get_corename();
  if (const size_t at = marker.find(kBlasReplaced); at != std::string::npos) {
    const std::string replaced = marker.substr(at + std::string(kBlasReplaced).size());
    const std::optional<BlasKernelChoice> choice = preferred_blas_kernels();
    info += " (chosen by tinygpt over the library's " + replaced.substr(0, replaced.find(' ')) + ": " +
            (choice ? choice->reason : std::string("?")) + ")";
  } else if (at_start("OPENBLAS_CORETYPE")) {
    info += " (your OPENBLAS_CORETYPE" + would_choose_note() + ")";
  } else {
    info += " (the library's pick" + would_choose_note() + ")";
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
