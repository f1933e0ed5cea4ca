// Elementwise and reduction kernels on 16M floats against the machine's copy
// bandwidth, measured in the same run.
//
// Each benchmark reports GB/s: the bytes a perfect kernel must move (every
// input read once, the output written once) divided by the time. `copy` is a
// plain parallel memcpy of the same 64 MB: the ceiling for any streaming kernel.
// Run through bench/run_elementwise.sh, which interleaves repetitions and
// prints medians with each kernel's share of the copy bandwidth.
#include <benchmark/benchmark.h>
#include <omp.h>

#include <cstring>

#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/reduce.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

constexpr int64_t kRows = 4096, kCols = 4096;  // 16M floats, 64 MB
constexpr double kTensorBytes = kRows * kCols * sizeof(float);

Tensor random_matrix(uint64_t seed) {
  Generator generator(seed);
  return uniform({kRows, kCols}, -1, 1, generator);
}

void report(benchmark::State& state, double bytes_per_iteration) {
  state.counters["GB/s"] = benchmark::Counter(bytes_per_iteration, benchmark::Counter::kIsIterationInvariantRate,
                                              benchmark::Counter::kIs1000);
}

void BM_copy(benchmark::State& state) {
  const Tensor source = random_matrix(1);
  Tensor destination = zeros({kRows, kCols});
  const char* from = reinterpret_cast<const char*>(source.data<float>());
  char* to = reinterpret_cast<char*>(destination.data<float>());
  const int64_t bytes = static_cast<int64_t>(kTensorBytes);
  for (auto _ : state) {
#pragma omp parallel
    {
      const int64_t chunk = bytes / omp_get_num_threads();
      const int64_t begin = chunk * omp_get_thread_num();
      const int64_t end = omp_get_thread_num() == omp_get_num_threads() - 1 ? bytes : begin + chunk;
      std::memcpy(to + begin, from + begin, static_cast<size_t>(end - begin));
    }
    benchmark::ClobberMemory();
  }
  report(state, 2 * kTensorBytes);
}

void BM_add(benchmark::State& state) {
  const Tensor a = random_matrix(1), b = random_matrix(2);
  for (auto _ : state) benchmark::DoNotOptimize(raw::add(a, b));
  report(state, 3 * kTensorBytes);
}

void BM_mul(benchmark::State& state) {
  const Tensor a = random_matrix(1), b = random_matrix(2);
  for (auto _ : state) benchmark::DoNotOptimize(raw::mul(a, b));
  report(state, 3 * kTensorBytes);
}

void BM_exp(benchmark::State& state) {
  const Tensor a = random_matrix(1);
  for (auto _ : state) benchmark::DoNotOptimize(raw::exp(a));
  report(state, 2 * kTensorBytes);
}

// (4096, 4096) + (4096,): a bias add; the row is read once per row but stays in cache.
void BM_add_broadcast_row(benchmark::State& state) {
  const Tensor a = random_matrix(1);
  Generator generator(3);
  const Tensor row = uniform({kCols}, -1, 1, generator);
  for (auto _ : state) benchmark::DoNotOptimize(raw::add(a, row));
  report(state, 2 * kTensorBytes);
}

// (4096, 4096) * (4096, 1): a per-row scale (stride-0 inner operand).
void BM_mul_broadcast_column(benchmark::State& state) {
  const Tensor a = random_matrix(1);
  Generator generator(4);
  const Tensor column = uniform({kRows, 1}, -1, 1, generator);
  for (auto _ : state) benchmark::DoNotOptimize(raw::mul(a, column));
  report(state, 2 * kTensorBytes);
}

// A transposed operand: strided reads, the general path.
void BM_add_transposed(benchmark::State& state) {
  const Tensor a = random_matrix(1), b = raw::transpose(random_matrix(2), 0, 1);
  for (auto _ : state) benchmark::DoNotOptimize(raw::add(a, b));
  report(state, 3 * kTensorBytes);
}

void BM_sum_rows(benchmark::State& state) {  // (4096, 4096) -> (4096,)
  const Tensor a = random_matrix(1);
  for (auto _ : state) benchmark::DoNotOptimize(raw::sum(a, {1}));
  report(state, kTensorBytes);
}

void BM_sum_columns(benchmark::State& state) {  // (4096, 4096) -> (4096,), e.g. a bias gradient
  const Tensor a = random_matrix(1);
  for (auto _ : state) benchmark::DoNotOptimize(raw::sum(a, {0}));
  report(state, kTensorBytes);
}

}  // namespace

BENCHMARK(BM_copy)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mul)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_exp)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_broadcast_row)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_mul_broadcast_column)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_transposed)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_sum_rows)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_sum_columns)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
