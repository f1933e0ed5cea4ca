#include "cli/version.h"

#include <cblas.h>

#include "tensor/threads.h"

namespace tg::cli {

namespace {

// The extensions the compiler was allowed to use (-march): a build uses no more.
std::string build_extensions() {
  std::string names;
  const auto add = [&](const char* name) { names += names.empty() ? name : std::string(" ") + name; };
#ifdef __AVX512F__
  add("AVX-512F");
#endif
#ifdef __AVX512BF16__
  add("AVX512-BF16");
#endif
#ifdef __AVX2__
  add("AVX2");
#endif
#ifdef __FMA__
  add("FMA");
#endif
  return names.empty() ? "SSE2 only" : names;
}

std::string cpu_extensions() {
  std::string names;
  const auto add_if = [&](bool present, const char* name) {
    if (present) names += names.empty() ? name : std::string(" ") + name;
  };
  __builtin_cpu_init();
  add_if(__builtin_cpu_supports("avx512f"), "AVX-512F");
  add_if(__builtin_cpu_supports("avx512bf16"), "AVX512-BF16");
  add_if(__builtin_cpu_supports("avx2"), "AVX2");
  add_if(__builtin_cpu_supports("fma"), "FMA");
  return names.empty() ? "SSE2 only" : names;
}

}  // namespace

std::string version_text() {
  std::string config = openblas_get_config();
  while (!config.empty() && config.back() == ' ') config.pop_back();
  return std::string("tinygpt ") + TINYGPT_VERSION + "\n" +
         "built for: " + build_extensions() + "\n" +
         "this CPU:  " + cpu_extensions() + "\n" +
         "BLAS:      " + config + ", " + blas_kernels() + " kernels";
}

}  // namespace tg::cli
