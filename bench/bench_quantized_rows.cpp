// The one-row kernels of batch-1 decoding with reduced-precision weights
// (tensor/cpu/quantized_kernels.h): out = W x for bfloat16 and int8 weight
// matrices, with every set of kernels this CPU runs (AVX2, AVX-512, AVX-512
// VNNI+BF16), on one thread; and float32 weights (cpu::gemv_rows_serial,
// tensor/cpu/gemv.h) beside them.
//
//   in_cache     768 x 768 weights (gpt2's c_proj: 0.6 MB int8, 1.2 MB
//                bfloat16), the same matrix again and again: it stays in L2/L3,
//                so this measures the kernel's own speed
//   from_memory  64 such matrices in turn (38 MB int8, 75 MB bfloat16, 151 MB
//                float32, more than the L3 of most CPUs): the weights stream from memory, as in
//                decoding, where a token reads each weight once
//
// Counters: "weights" (G weights a second) and "bytes" (GB/s of weights and
// scales read). Interleave the sets with --benchmark_enable_random_interleaving
// and repetitions (bench/run_quantized_rows.sh).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/cpu/kernel_table.h"
#include "tinygpt/tensor/quantized_matmul.h"
#include "tinygpt/tensor/random.h"

using namespace tg;

namespace {

constexpr int64_t kRows = 768, kCols = 768;

struct Workload {
  std::vector<QuantizedMatrix> matrices;
  cpu::RoundedActivations x;
};

Workload make_workload(DType format, int64_t matrices) {
  Generator generator(7);
  Workload workload;
  for (int64_t index = 0; index < matrices; ++index)
    workload.matrices.push_back(quantize_matrix(normal({kRows, kCols}, 0.0, 0.02, generator), format));
  const std::vector<float> x = normal({kCols}, 0.0, 1.0, generator).to_vector<float>();
  raw::prepare_activations(workload.matrices.front(), x.data(), workload.x);
  return workload;
}

void float32_rows_product(benchmark::State& state, int64_t matrices) {
  Generator generator(7);
  std::vector<Tensor> weights;
  for (int64_t index = 0; index < matrices; ++index) weights.push_back(normal({kRows, kCols}, 0.0, 0.02, generator));
  const std::vector<float> x = normal({kCols}, 0.0, 1.0, generator).to_vector<float>();
  std::vector<float> out(kRows);
  size_t next = 0;
  for (auto _ : state) {
    cpu::gemv_rows_serial(kRows, kCols, 1.0f, weights[next].data<float>(), kCols, x.data(), 0.0f, out.data());
    next = (next + 1) % weights.size();
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.counters["weights"] = benchmark::Counter(kRows * kCols * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = benchmark::Counter(kRows * kCols * 4e-9, benchmark::Counter::kIsIterationInvariantRate);
}

void rows_product(benchmark::State& state, cpu::QuantizedKernelSet set, DType format, int64_t matrices) {
  const Workload workload = make_workload(format, matrices);
  const cpu::QuantizedRowKernels& kernels = cpu::quantized_row_kernels(set);
  std::vector<float> out(kRows);
  size_t next = 0;
  for (auto _ : state) {
    const QuantizedMatrix& matrix = workload.matrices[next];
    next = (next + 1) % workload.matrices.size();
    if (format == DType::Int8)
      kernels.dot_int8_rows(matrix.values.data<int8_t>(), matrix.scales.data<float>(), kRows, kCols, workload.x.int8,
                            out.data());
    else
      kernels.dot_bfloat16_rows(matrix.values.data<bfloat16>(), kRows, kCols, workload.x.bfloat16, out.data());
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  const QuantizedMatrix& matrix = workload.matrices.front();
  const auto bytes_of = [](const Tensor& tensor) {
    return tensor.defined() ? static_cast<double>(tensor.numel()) * static_cast<double>(dtype_size(tensor.dtype())) : 0.0;
  };
  const double bytes = bytes_of(matrix.values) + bytes_of(matrix.scales);
  state.counters["weights"] = benchmark::Counter(kRows * kCols * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  for (const auto& [where, matrices] : {std::pair<std::string, int64_t>{"in_cache", 1}, {"from_memory", 64}})
    benchmark::RegisterBenchmark(("float32/" + where).c_str(), [matrices = matrices](benchmark::State& state) {
      float32_rows_product(state, matrices);
    })->Unit(benchmark::kMicrosecond)->UseRealTime();
  for (cpu::QuantizedKernelSet set : cpu::quantized_kernel_sets_here())
    for (DType format : {DType::Int8, DType::BFloat16})
      for (const auto& [where, matrices] : {std::pair<std::string, int64_t>{"in_cache", 1}, {"from_memory", 64}}) {
        const std::string name = std::string(format == DType::Int8 ? "int8" : "bf16") + "/" + where + "/" +
                                 cpu::quantized_kernel_set_name(set);
        benchmark::RegisterBenchmark(name.c_str(), [set, format, matrices = matrices](benchmark::State& state) {
          rows_product(state, set, format, matrices);
        })->Unit(benchmark::kMicrosecond)->UseRealTime();
      }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
