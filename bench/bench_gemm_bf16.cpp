// The bfloat16 matrix product (cpu::gemm_bf16) against cblas_sgemm on the same
// shapes in float32, for the three products of a Linear layer in a training step:
//
//   forward          y (R, out) = x (R, in) @ W^T     W stored (out, in)
//   backward_input   dx (R, in) = dy (R, out) @ W
//   backward_weight  dW (out, in) = dy^T @ x           dy stored (R, out)
//
// with R = B*T rows. Each (layer, product) registers three sides: `bf16`
// (gemm_bf16 with the kernel this CPU gets: AVX512-BF16 where it has it),
// `fallback` (gemm_bf16's float32 sgemm kernel: widen, then sgemm) and `sgemm`
// (cblas_sgemm on float32 operands). `convert` times what a step pays before the
// forward product: x and W rounded from float32 to bfloat16.
// bench/run_gemm_bf16.sh interleaves repetitions and prints medians and ratios.
// OpenBLAS runs with the kernels tinygpt picks (tensor/runtime/process_environment.h).
//
// Layers (R, in, out): cpu-small's MLP up (B*T = 12*64, C = 128), baby's qkv and
// MLP up (B*T = 64*256, C = 384), gpt2's qkv and MLP up for one sequence
// (B*T = 1024 of nanoGPT's 12*1024, C = 768: the full batch is 12 times the work
// at the same rate).
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "bench/proc_readings.h"
#include "tinygpt/tensor/cpu/bfloat16_convert.h"
#include "tinygpt/tensor/cpu/gemm.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "tinygpt/tensor/runtime/process_environment.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"

using namespace tg;

namespace {

struct Layer {
  std::string name;
  int64_t rows, in, out;
};

enum class Form { forward, backward_input, backward_weight };

// One product c (m, n) = op(a) (m, k) @ op(b) (k, n), as gemm's arguments.
struct Product {
  bool transpose_a, transpose_b;
  int64_t m, n, k;
};

Product product_of(const Layer& layer, Form form) {
  switch (form) {
    case Form::forward:
      return {false, true, layer.rows, layer.out, layer.in};
    case Form::backward_input:
      return {false, false, layer.rows, layer.in, layer.out};
    case Form::backward_weight:
      return {true, false, layer.out, layer.in, layer.rows};
  }
  return {};
}

std::vector<float> random_floats(int64_t count, uint64_t seed) {
  Generator generator(seed);
  std::vector<float> values(static_cast<size_t>(count));
  for (float& value : values) value = static_cast<float>(2 * generator.next_uniform() - 1);
  return values;
}

std::vector<bfloat16> to_bf16(const std::vector<float>& values) {
  std::vector<bfloat16> rounded(values.size());
  const auto count = static_cast<int64_t>(values.size());
  cpu::float_to_bfloat16_rows(1, count, values.data(), count, rounded.data(), count);
  return rounded;
}

// A layer's tensors in both precisions: x (R, in), W (out, in), dy (R, out).
struct Tensors {
  std::vector<float> x, weight, dy;
  std::vector<bfloat16> x_bf16, weight_bf16, dy_bf16;
  explicit Tensors(const Layer& layer)
      : x(random_floats(layer.rows * layer.in, 1)),
        weight(random_floats(layer.out * layer.in, 2)),
        dy(random_floats(layer.rows * layer.out, 3)),
        x_bf16(to_bf16(x)),
        weight_bf16(to_bf16(weight)),
        dy_bf16(to_bf16(dy)) {}
};

// The operands of `form`, with their leading dimensions (the stored rows' lengths).
template <class T>
struct Operands {
  const T *a, *b;
  int64_t lda, ldb;
};

template <class T>
Operands<T> operands_of(const Layer& layer, Form form, const std::vector<T>& x, const std::vector<T>& weight,
                        const std::vector<T>& dy) {
  switch (form) {
    case Form::forward:
      return {x.data(), weight.data(), layer.in, layer.in};
    case Form::backward_input:
      return {dy.data(), weight.data(), layer.out, layer.in};
    case Form::backward_weight:
      return {dy.data(), x.data(), layer.out, layer.in};
  }
  return {};
}

enum class Side { bf16, fallback, sgemm };

void product(benchmark::State& state, const Layer& layer, Form form, Side side) {
  const Tensors tensors(layer);
  const Product p = product_of(layer, form);
  std::vector<float> c(static_cast<size_t>(p.m * p.n));
  const auto floats = operands_of(layer, form, tensors.x, tensors.weight, tensors.dy);
  const auto halves = operands_of(layer, form, tensors.x_bf16, tensors.weight_bf16, tensors.dy_bf16);
  const cpu::Bf16GemmKernel kernel = side == Side::bf16 ? cpu::bf16_gemm_kernel() : cpu::Bf16GemmKernel::float32_sgemm;
  for (auto _ : state) {
    if (side == Side::sgemm)
      cpu::gemm(p.transpose_a, p.transpose_b, p.m, p.n, p.k, 1.0f, floats.a, floats.lda, floats.b, floats.ldb, 0.0f,
                c.data(), p.n);
    else
      cpu::gemm_bf16(kernel, p.transpose_a, p.transpose_b, p.m, p.n, p.k, 1.0f, halves.a, halves.lda, halves.b,
                     halves.ldb, 0.0f, c.data(), p.n);
    benchmark::ClobberMemory();
  }
  const double flops = 2.0 * static_cast<double>(p.m) * static_cast<double>(p.n) * static_cast<double>(p.k);
  state.counters["GFLOP/s"] = benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// x (R, in) and W (out, in) rounded to bfloat16: the forward product's operands.
void convert(benchmark::State& state, const Layer& layer) {
  const Tensors tensors(layer);
  std::vector<bfloat16> x(tensors.x.size()), weight(tensors.weight.size());
  for (auto _ : state) {
    cpu::float_to_bfloat16_rows(layer.rows, layer.in, tensors.x.data(), layer.in, x.data(), layer.in);
    cpu::float_to_bfloat16_rows(layer.out, layer.in, tensors.weight.data(), layer.in, weight.data(), layer.in);
    benchmark::ClobberMemory();
  }
  const double bytes = 6.0 * static_cast<double>(tensors.x.size() + tensors.weight.size());  // 4 read, 2 written
  state.counters["GB/s"] = benchmark::Counter(bytes * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

}  // namespace

int main(int argc, char** argv) {
  // The OpenBLAS kernels and thread settings tinygpt trains with (SkylakeX's or
  // Cooperlake's AVX-512 sgemm rather than a machine-wide OPENBLAS_CORETYPE=Haswell).
  tune_process_environment(argv);
  const std::vector<Layer> layers = {
      {"cpu-small_mlp_up_768x128->512", 768, 128, 512},  {"baby_qkv_16384x384->1152", 16384, 384, 1152},
      {"baby_mlp_up_16384x384->1536", 16384, 384, 1536}, {"gpt2_qkv_1024x768->2304", 1024, 768, 2304},
      {"gpt2_mlp_up_1024x768->3072", 1024, 768, 3072},
  };
  const std::pair<const char*, Form> forms[] = {
      {"forward", Form::forward}, {"backward_input", Form::backward_input}, {"backward_weight", Form::backward_weight}};
  const std::pair<const char*, Side> sides[] = {
      {"bf16", Side::bf16}, {"fallback", Side::fallback}, {"sgemm", Side::sgemm}};
  for (const Layer& layer : layers) {
    for (const auto& [form_name, form] : forms)
      for (const auto& [side_name, side] : sides)
        benchmark::RegisterBenchmark((layer.name + "/" + form_name + "/" + side_name).c_str(), product, layer, form,
                                     side)
            ->UseRealTime();
    benchmark::RegisterBenchmark((layer.name + "/convert").c_str(), convert, layer)->UseRealTime();
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext("cpu", bench::cpu_model_name());
  benchmark::AddCustomContext("threads", thread_info());
  benchmark::AddCustomContext("bf16 kernel", cpu::bf16_gemm_kernel_name(cpu::bf16_gemm_kernel()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
