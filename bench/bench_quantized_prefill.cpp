// The many-row products of prefill with reduced-precision weights
// (raw::matmul_quantized, tensor/quantized_matmul.h): y (N, out) = x (N, in) @ W^T
// for gpt2's four Linear shapes and N prompt tokens, with float32 weights
// (cpu::gemm, as Linear runs them) beside bfloat16 and int8 ones, on the OpenMP
// threads. Each product gets a fresh set of weights in turn (12 of each shape,
// as many as gpt2 has layers), so the weights come from memory as in a forward.
//
// Counters: "gflops" (GFLOP/s of the product). Interleave with
// --benchmark_enable_random_interleaving and repetitions (bench/run_quantized_prefill.sh).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/quantized_matmul.h"
#include "tinygpt/tensor/random.h"

using namespace tg;

namespace {

constexpr int64_t kLayers = 12;

struct LinearShape {
  const char* name;
  int64_t out, in;
};
constexpr LinearShape kShapes[] = {{"attn.qkv", 2304, 768}, {"attn.proj", 768, 768}, {"mlp.fc", 3072, 768},
                                   {"mlp.proj", 768, 3072}};

void prefill_product(benchmark::State& state, LinearShape shape, DType format, int64_t tokens) {
  Generator generator(7);
  const Tensor x = normal({tokens, shape.in}, 0.0, 1.0, generator);
  std::vector<Tensor> weights;
  std::vector<QuantizedMatrix> quantized;
  for (int64_t layer = 0; layer < kLayers; ++layer) {
    Tensor weight = normal({shape.out, shape.in}, 0.0, 0.02, generator);
    if (format == DType::Float32)
      weights.push_back(weight);
    else
      quantized.push_back(quantize_matrix(weight, format));
  }
  Tensor y = Tensor::empty({tokens, shape.out}, DType::Float32);
  size_t next = 0;
  for (auto _ : state) {
    if (format == DType::Float32)
      cpu::gemm(false, true, tokens, shape.out, shape.in, 1.0f, x.data<float>(), shape.in, weights[next].data<float>(),
                shape.in, 0.0f, y.data<float>(), shape.out);
    else
      y = raw::matmul_quantized(x, quantized[next]);
    next = (next + 1) % kLayers;
    benchmark::DoNotOptimize(y.data<float>());
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(tokens * shape.out * shape.in);
  state.counters["gflops"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t tokens = 64;
  for (int index = 1; index < argc; ++index)
    if (std::string(argv[index]).starts_with("--tokens=")) tokens = std::stoll(std::string(argv[index]).substr(9));
  for (const LinearShape& shape : kShapes)
    for (DType format : {DType::Float32, DType::BFloat16, DType::Int8}) {
      const std::string name = std::string(dtype_name(format)) + "/" + shape.name;
      benchmark::RegisterBenchmark(name.c_str(), [shape, format, tokens](benchmark::State& state) {
        prefill_product(state, shape, format, tokens);
      })->Unit(benchmark::kMicrosecond)->UseRealTime();
    }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
