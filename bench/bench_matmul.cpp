// Matrix products through the tensor layer (raw::matmul) against a bare
// cblas_sgemm on the same data, shape by shape.
//
// The tensor layer adds checks, the output allocation and the choice of BLAS
// flags; for GPT-sized products that overhead should stay within a few percent
// of BLAS itself. Each case registers its `tensor` and `blas` runs side by side;
// bench/run_matmul.sh interleaves repetitions and prints a table of medians
// with the ratio tensor / blas.
//
// Shapes (M, K, N) are those of a small GPT's training step with B*T = 768 rows:
// the qkv, MLP and projection layers (C = 128), the LM head (V = 65), and square
// products for scale.
//
// One-row products (M = 1, batch-1 generation of the gpt2 shape) are bound by
// reading the weight, so they report GB/s of weight read: `tensor` is raw::matmul
// (which sends them to cpu::gemv_rows), `gemv` the kernel alone, `reference` its
// plain loop, `blas` cblas_sgemv on the same (N, K) weight.
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/tensor/cpu/gemv.h"
#include "tinygpt/tensor/matmul.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

struct Case {
  std::string name;
  int64_t batch, m, k, n;
  bool b_transposed;  // B stored (N, K) and used as its transpose: A @ B^T
  bool b_shared;      // batched: one B for every batch (x @ W), else one per batch
};

void report(benchmark::State& state, const Case& c) {
  const double flops = 2.0 * static_cast<double>(c.batch * c.m * c.k * c.n);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

Tensor random_tensor(const Shape& shape, uint64_t seed) {
  Generator generator(seed);
  return uniform(shape, -1, 1, generator);
}

Shape with_batch(const Case& c, int64_t rows, int64_t cols) {
  return c.batch == 1 ? Shape{rows, cols} : Shape{c.batch, rows, cols};
}

// The operands as the tensor layer sees them: A (batch, M, K), B (K, N) or (batch, K, N).
struct Operands {
  Tensor a, b_stored, b;
  explicit Operands(const Case& c) {
    a = random_tensor(with_batch(c, c.m, c.k), 1);
    const int64_t b_batch = c.b_shared ? 1 : c.batch;
    const Shape stored = c.b_transposed ? Shape{c.n, c.k} : Shape{c.k, c.n};
    b_stored = random_tensor(b_batch == 1 ? stored : Shape{b_batch, stored[0], stored[1]}, 2);
    b = c.b_transposed ? raw::transpose(b_stored, -2, -1) : b_stored;
  }
};

void tensor_matmul(benchmark::State& state, const Case& c) {
  const Operands operands(c);
  for (auto _ : state) benchmark::DoNotOptimize(raw::matmul(operands.a, operands.b));
  report(state, c);
}

// What a hand-written caller would do: one preallocated output, a shared weight
// folded into the rows (one gemm), per-batch weights as a loop of gemms.
void blas_sgemm(benchmark::State& state, const Case& c) {
  const Operands operands(c);
  std::vector<float> out(static_cast<size_t>(c.batch * c.m * c.n));
  const float* a = operands.a.data<float>();
  const float* b = operands.b_stored.data<float>();
  const CBLAS_TRANSPOSE b_flag = c.b_transposed ? CblasTrans : CblasNoTrans;
  const int ldb = static_cast<int>(c.b_transposed ? c.k : c.n);
  const int64_t gemms = c.b_shared ? 1 : c.batch;
  const int rows = static_cast<int>(c.b_shared ? c.batch * c.m : c.m);
  for (auto _ : state) {
    for (int64_t g = 0; g < gemms; ++g)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, b_flag, rows, static_cast<int>(c.n), static_cast<int>(c.k), 1.0f,
                  a + g * c.m * c.k, static_cast<int>(c.k), b + g * c.k * c.n, ldb, 0.0f, out.data() + g * c.m * c.n,
                  static_cast<int>(c.n));
    benchmark::ClobberMemory();
  }
  report(state, c);
}

// One row x (1, K) times a weight stored (N, K): y = W x. Weights of 50 to 150 MB
// each, cycled through so that every iteration reads them from memory, not cache.
struct GemvCase {
  std::string name;
  int64_t k, n;
};

struct GemvOperands {
  std::vector<Tensor> weights;  // each (N, K)
  Tensor x;                     // (1, K)
  explicit GemvOperands(const GemvCase& c) {
    const int64_t copies = std::max<int64_t>(1, 50'000'000 / (c.n * c.k));
    for (int64_t copy = 0; copy < copies; ++copy) weights.push_back(random_tensor({c.n, c.k}, 3 + copy));
    x = random_tensor({1, c.k}, 1);
  }
};

void report_gemv(benchmark::State& state, const GemvCase& c) {
  const double bytes = 4.0 * static_cast<double>(c.n * c.k);
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

enum class GemvSide { tensor, gemv, reference, blas };

void gemv_side(benchmark::State& state, const GemvCase& c, GemvSide side) {
  const GemvOperands operands(c);
  std::vector<float> out(static_cast<size_t>(c.n));
  const float* x = operands.x.data<float>();
  size_t next = 0;
  for (auto _ : state) {
    const Tensor& w = operands.weights[next];
    next = (next + 1) % operands.weights.size();
    switch (side) {
      case GemvSide::tensor: benchmark::DoNotOptimize(raw::matmul(operands.x, raw::transpose(w, 0, 1))); break;
      case GemvSide::gemv: cpu::gemv_rows(c.n, c.k, 1, w.data<float>(), c.k, x, 0, out.data()); break;
      case GemvSide::reference: cpu::gemv_rows_reference(c.n, c.k, 1, w.data<float>(), c.k, x, 0, out.data()); break;
      case GemvSide::blas:
        cblas_sgemv(CblasRowMajor, CblasNoTrans, static_cast<int>(c.n), static_cast<int>(c.k), 1.0f, w.data<float>(),
                    static_cast<int>(c.k), x, 1, 0.0f, out.data(), 1);
        break;
    }
    benchmark::ClobberMemory();
  }
  report_gemv(state, c);
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<Case> cases = {
      {"768x128@128x384", 1, 768, 128, 384, false, true},   // qkv projection
      {"768x128@128x512", 1, 768, 128, 512, false, true},   // MLP up
      {"768x512@512x128", 1, 768, 512, 128, false, true},   // MLP down
      {"768x128@128x65", 1, 768, 128, 65, false, true},     // LM head
      {"768x128@(384x128)T", 1, 768, 128, 384, true, true},  // A @ B^T, B stored (N, K): tied weights
      {"1024x1024@1024x1024", 1, 1024, 1024, 1024, false, true},
      {"2048x2048@2048x2048", 1, 2048, 2048, 2048, false, true},
      {"4x(192x128)@128x384", 4, 192, 128, 384, false, true},  // x (B, T, C) @ W: folded into one gemm
      {"24x(128x32)@(128x32)T", 24, 128, 32, 128, true, false},  // attention scores q @ k^T per head
  };
  for (const Case& c : cases) {
    benchmark::RegisterBenchmark((c.name + "/tensor").c_str(), tensor_matmul, c)->UseRealTime();
    benchmark::RegisterBenchmark((c.name + "/blas").c_str(), blas_sgemm, c)->UseRealTime();
  }
  const std::vector<GemvCase> gemv_cases = {
      {"gemv_1x768@(2304x768)T", 768, 2304},    // gpt2 qkv
      {"gemv_1x768@(768x768)T", 768, 768},      // attention projection
      {"gemv_1x768@(3072x768)T", 768, 3072},    // MLP up
      {"gemv_1x3072@(768x3072)T", 3072, 768},   // MLP down
      {"gemv_1x768@(50257x768)T", 768, 50257},  // tied LM head
  };
  for (const GemvCase& c : gemv_cases) {
    const std::pair<const char*, GemvSide> sides[] = {{"/tensor", GemvSide::tensor},
                                                      {"/gemv", GemvSide::gemv},
                                                      {"/reference", GemvSide::reference},
                                                      {"/blas", GemvSide::blas}};
    for (const auto& [suffix, side] : sides)
      benchmark::RegisterBenchmark((c.name + suffix).c_str(), gemv_side, c, side)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("threads", thread_info());
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
