#include "tinygpt/tensor/runtime/threads.h"

#include <cblas.h>
#include <omp.h>

#include <atomic>
#include <string>

#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/process_environment.h"

namespace tg {

namespace {
std::atomic<int> ceiling{0};  // 0: not yet set or read
}  // namespace

void set_num_threads(int threads) {
  check(threads >= 1, "set_num_threads: need at least 1 thread, got ", threads);
  ceiling = threads;
  use_threads(threads);
}

void use_threads(int threads) {
  omp_set_num_threads(threads);
  // The OpenMP build of OpenBLAS follows omp_get_max_threads() at each call;
  // setting its own count too keeps openblas_get_num_threads() truthful.
  openblas_set_num_threads(threads);
}

int num_threads() { return omp_get_max_threads(); }

int thread_ceiling() {
  int expected = 0;
  ceiling.compare_exchange_strong(expected, omp_get_max_threads());  // the first call reads OpenMP's default
  return ceiling;
}

namespace {
std::string count_of(int count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}
}  // namespace

std::string thread_info() {
  const char* parallel_kinds[] = {"sequential", "pthreads", "OpenMP"};
  const int parallel = openblas_get_parallel();
  const std::string blas_kind = parallel >= 0 && parallel <= 2 ? parallel_kinds[parallel] : "unknown";
  std::string config = openblas_get_config();
  while (!config.empty() && config.back() == ' ') config.pop_back();
  return count_of(num_threads(), "OpenMP thread") + "; " + config + " (" + blas_kind + " build), " +
         count_of(openblas_get_num_threads(), "thread") + "; " + process_environment_info();
}

std::string blas_kernels() { return openblas_get_corename(); }

bool blas_results_independent_of_threads(const std::string& core) {
  return core == "SkylakeX" || core == "Cooperlake";
}

}  // namespace tg
