#include "cli/version.h"

#include <cblas.h>

#include <initializer_list>

#include "tinygpt/distributed/job.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cli {

namespace {

struct Extension {
  bool present;
  const char* name;
};

// "AVX-512F AVX2 FMA": the names of the extensions present.
std::string names_of(std::initializer_list<Extension> extensions) {
  std::string names;
  for (const Extension& extension : extensions)
    if (extension.present) names += names.empty() ? extension.name : std::string(" ") + extension.name;
  return names.empty() ? "SSE2 only" : names;
}

#ifdef __AVX512F__
constexpr bool kBuiltForAvx512f = true;
#else
constexpr bool kBuiltForAvx512f = false;
#endif
#ifdef __AVX512BF16__
constexpr bool kBuiltForAvx512bf16 = true;
#else
constexpr bool kBuiltForAvx512bf16 = false;
#endif
#ifdef __AVX2__
constexpr bool kBuiltForAvx2 = true;
#else
constexpr bool kBuiltForAvx2 = false;
#endif
#ifdef __FMA__
constexpr bool kBuiltForFma = true;
#else
constexpr bool kBuiltForFma = false;
#endif

// The extensions the compiler was allowed to use (-march): a build uses no more.
std::string build_extensions() {
  return names_of({{kBuiltForAvx512f, "AVX-512F"}, {kBuiltForAvx512bf16, "AVX512-BF16"}, {kBuiltForAvx2, "AVX2"},
                   {kBuiltForFma, "FMA"}});
}

std::string cpu_extensions() {
  __builtin_cpu_init();
  return names_of({{__builtin_cpu_supports("avx512f") != 0, "AVX-512F"},
                   {__builtin_cpu_supports("avx512bf16") != 0, "AVX512-BF16"},
                   {__builtin_cpu_supports("avx2") != 0, "AVX2"},
                   {__builtin_cpu_supports("fma") != 0, "FMA"}});
}

}  // namespace

std::string version_text() {
  std::string config = openblas_get_config();
  while (!config.empty() && config.back() == ' ') config.pop_back();
  return std::string("tinygpt ") + TINYGPT_VERSION + "\n" +
         "built for: " + build_extensions() + "\n" +
         "this CPU:  " + cpu_extensions() + "\n" +
         "BLAS:      " + config + ", " + blas_kernels() + " kernels\n" +
         "runtime:   " + process_environment_info() + "\n" +
         "MPI:       " + (dist::built_with_mpi() ? dist::mpi_library_version() + " (mpirun -np N tinygpt train)"
                                                 : std::string("none (this build trains in one process)"));
}

}  // namespace tg::cli
