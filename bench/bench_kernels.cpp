// The fused GPT kernels (nn/functional/), forward and forward+backward, at two
// model shapes. bench/torch_kernels.py times PyTorch's equivalents at the same
// shapes and bench/run_kernels.sh interleaves the two and prints the ratios.
//
// "<kernel>_vs_reference" times each fused kernel against its *_reference
// composition of plain autograd ops, forward + backward at the same shapes, in
// alternation within each iteration, and reports both times and their ratio
// (see fused_vs_reference).
//
// Each fwd and fwd_bwd benchmark reports one counter, "rate", in the unit of its label:
// GFLOP/s for attention (dense count: 4 B NH T^2 HS forward and 8 B NH T^2 HS
// backward, as if nothing were masked — the same count for torch), GB/s for the
// memory-bound kernels (bytes each pass must read and write at least once).
//
// "fwd_bwd" runs the op and then its recorded backward function directly
// (Node::backward), so it times the two kernels and their allocations but not the
// engine's copy of each leaf gradient into .grad: torch adopts a leaf's first
// gradient without a copy, and in a model these inputs are not leaves anyway.
//
// Shapes:  cpu-small  B=12, T=64,  C=128, NH=4, V=65, 4 layers (AdamW over 0.8M params)
//          baby       B=64, T=256, C=384, NH=6, V=65, 6 layers (AdamW over 10.7M params)
#include <benchmark/benchmark.h>

#include <chrono>
#include <string>
#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/functional/adamw.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/functional/dropout.h"
#include "tinygpt/nn/functional/gelu.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/nn/functional/rms_norm.h"
#include "tinygpt/nn/functional/rope.h"
#include "tinygpt/nn/functional/swiglu.h"
#include "tinygpt/tensor/view.h"

using namespace tg;

namespace {

struct ModelShape {
  std::string name;
  int64_t batch, positions, channels, heads, vocab, layers;
  int64_t head_size() const { return channels / heads; }
  int64_t rows() const { return batch * positions; }
  // Parameters of a GPT-2-style model with these sizes (weights and biases, tied LM head).
  int64_t parameters() const {
    const int64_t c = channels;
    const int64_t per_layer = 12 * c * c + 13 * c;
    return vocab * c + positions * c + layers * per_layer + 2 * c;
  }
};

const std::vector<ModelShape> kShapes = {{"cpu-small", 12, 64, 128, 4, 65, 4}, {"baby", 64, 256, 384, 6, 65, 6}};

constexpr double kDropout = 0.2;  // baby's

// How a kernel is timed.
enum class Mode {
  Forward,          // the fused op, under no-grad
  ForwardBackward,  // the fused op, then its recorded backward function (run_backward)
  VsReference,      // fused against its *_reference composition, forward + backward (fused_vs_reference)
};

// The gradients of the op that made y, for upstream gradient dy, every input wanting one.
void run_backward(const Tensor& y, const Tensor& dy) {
  const Node& node = *y.grad_fn();
  benchmark::DoNotOptimize(node.backward(dy, Needs(node.inputs.size(), true)));
}

void set_rate(benchmark::State& state, double work_per_iteration, const char* unit) {
  state.counters["rate"] = benchmark::Counter(work_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(unit);
}

// The rate of `forward` or `forward_backward` units of work per iteration (none
// for a comparison, which reports its own counters).
void set_rate(benchmark::State& state, Mode mode, double forward, double forward_backward, const char* unit) {
  if (mode != Mode::VsReference) set_rate(state, mode == Mode::Forward ? forward : forward_backward, unit);
}

Tensor leaf(const Shape& shape, uint64_t seed, double scale = 1.0) {
  Generator generator(seed);
  Tensor x = normal(shape, 0, scale, generator);
  x.set_requires_grad();
  return x;
}

// q, k, v as strided views of one (B, T, 3C) projection, each a leaf.
std::vector<Tensor> qkv_leaves(const ModelShape& s) {
  Generator generator(1);
  const Tensor qkv = randn({s.batch, s.positions, 3, s.heads, s.head_size()}, generator);
  std::vector<Tensor> parts;
  for (int64_t part = 0; part < 3; ++part) {
    Tensor view = raw::permute(raw::select(qkv, 2, part), {0, 2, 1, 3});
    view.set_requires_grad();
    parts.push_back(view);
  }
  return parts;
}

// Mode::Forward or Mode::ForwardBackward of fused() alone.
template <class Fused>
void measure(benchmark::State& state, Mode mode, const Tensor& dy, const Fused& fused) {
  for (auto _ : state) {
    if (mode == Mode::ForwardBackward) {
      run_backward(fused(), dy);
    } else {
      NoGradGuard no_grad;
      benchmark::DoNotOptimize(fused());
    }
  }
}

// The fused op against its reference composition, both forward + backward on
// the same inputs. Each iteration times one of each, alternating which goes
// first, so that drift of the shared machine and cache warmth hit both alike.
// Both run the whole backward() into the inputs' .grad (the reference is a graph
// of many ops), cleared before each run. Reports fused_ms and reference_ms per
// iteration and speedup = reference time / fused time.
template <class Fused, class Reference>
void fused_vs_reference(benchmark::State& state, const std::vector<Tensor>& inputs, const Tensor& dy,
                        const Fused& fused, const Reference& reference) {
  using Clock = std::chrono::steady_clock;
  const auto seconds_of = [&](const auto& op) {
    zero_grad(inputs);
    const Clock::time_point start = Clock::now();
    backward(op(), dy);
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  double fused_seconds = 0, reference_seconds = 0;
  bool fused_first = true;
  for (auto _ : state) {
    if (fused_first) fused_seconds += seconds_of(fused);
    reference_seconds += seconds_of(reference);
    if (!fused_first) fused_seconds += seconds_of(fused);
    fused_first = !fused_first;
  }
  state.counters["fused_ms"] = benchmark::Counter(fused_seconds * 1e3, benchmark::Counter::kAvgIterations);
  state.counters["reference_ms"] = benchmark::Counter(reference_seconds * 1e3, benchmark::Counter::kAvgIterations);
  state.counters["speedup"] = reference_seconds / fused_seconds;
}

// Any mode of a kernel that has a reference; `inputs` are the leaves both take.
template <class Fused, class Reference>
void measure(benchmark::State& state, Mode mode, const std::vector<Tensor>& inputs, const Tensor& dy,
             const Fused& fused, const Reference& reference) {
  if (mode == Mode::VsReference) {
    fused_vs_reference(state, inputs, dy, fused, reference);
  } else {
    measure(state, mode, dy, fused);
  }
}

void attention(benchmark::State& state, const ModelShape& s, Mode mode) {
  const std::vector<Tensor> qkv = qkv_leaves(s);
  Generator generator(2);
  const Tensor dy = randn({s.batch, s.positions, s.channels}, generator);
  measure(
      state, mode, qkv, dy, [&] { return nn::causal_attention(qkv[0], qkv[1], qkv[2]); },
      [&] { return nn::causal_attention_reference(qkv[0], qkv[1], qkv[2]); });
  const double dense_flops = 4.0 * s.batch * s.heads * s.positions * s.positions * s.head_size();
  set_rate(state, mode, dense_flops, 3 * dense_flops, "GFLOP/s");
}

// Attention with bfloat16 products (train --dtype bf16); its "reference" is
// float32's fused kernel, so attention_bf16_vs_reference is bf16's gain over it.
void attention_bf16(benchmark::State& state, const ModelShape& s, Mode mode) {
  const std::vector<Tensor> qkv = qkv_leaves(s);
  Generator generator(2);
  const Tensor dy = randn({s.batch, s.positions, s.channels}, generator);
  measure(
      state, mode, qkv, dy, [&] { return nn::causal_attention(qkv[0], qkv[1], qkv[2], DType::BFloat16); },
      [&] { return nn::causal_attention(qkv[0], qkv[1], qkv[2]); });
  const double dense_flops = 4.0 * s.batch * s.heads * s.positions * s.positions * s.head_size();
  set_rate(state, mode, dense_flops, 3 * dense_flops, "GFLOP/s");
}

void layer_norm(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor x = leaf({s.batch, s.positions, s.channels}, 3);
  const Tensor weight = leaf({s.channels}, 4), bias = leaf({s.channels}, 5);
  const Tensor dy = leaf({s.batch, s.positions, s.channels}, 6).detach();
  measure(
      state, mode, {x, weight, bias}, dy, [&] { return nn::layer_norm(x, weight, bias); },
      [&] { return nn::layer_norm_reference(x, weight, bias); });
  const double element_bytes = 4.0 * s.rows() * s.channels;
  set_rate(state, mode, 2 * element_bytes, 5 * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, x, dx
}

void rms_norm(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor x = leaf({s.batch, s.positions, s.channels}, 15);
  const Tensor weight = leaf({s.channels}, 16);
  const Tensor dy = leaf({s.batch, s.positions, s.channels}, 17).detach();
  measure(
      state, mode, {x, weight}, dy, [&] { return nn::rms_norm(x, weight); },
      [&] { return nn::rms_norm_reference(x, weight); });
  const double element_bytes = 4.0 * s.rows() * s.channels;
  set_rate(state, mode, 2 * element_bytes, 5 * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, x, dx
}

// QK-norm: RMSNorm over each head's queries, a (B, NH, T, HS) strided view of the QKV projection.
void qk_norm(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor q = qkv_leaves(s)[0];
  const Tensor weight = leaf({s.head_size()}, 18);
  const Tensor dy = leaf({s.batch, s.heads, s.positions, s.head_size()}, 19).detach();
  measure(
      state, mode, {q, weight}, dy, [&] { return nn::rms_norm(q, weight); },
      [&] { return nn::rms_norm_reference(q, weight); });
  const double element_bytes = 4.0 * q.numel();
  set_rate(state, mode, 2 * element_bytes, 5 * element_bytes, "GB/s");
}

// SwiGLU on the MLP's fused gate and up projection (B, T, 2H), H = 8/3 C rounded up to 64.
void swiglu(benchmark::State& state, const ModelShape& s, Mode mode) {
  const int64_t hidden = (8 * s.channels / 3 + 63) / 64 * 64;
  const Tensor x = leaf({s.batch, s.positions, 2 * hidden}, 20);
  const Tensor dy = leaf({s.batch, s.positions, hidden}, 21).detach();
  measure(
      state, mode, {x}, dy, [&] { return nn::swiglu(x); }, [&] { return nn::swiglu_reference(x); });
  const double hidden_bytes = 4.0 * s.rows() * hidden;
  set_rate(state, mode, 3 * hidden_bytes, 7 * hidden_bytes, "GB/s");  // fwd: x (2H), y; bwd: dy, x, dx (2H)
}

void gelu(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor x = leaf({s.batch, s.positions, 4 * s.channels}, 7);  // the MLP's hidden activation
  const Tensor dy = leaf({s.batch, s.positions, 4 * s.channels}, 8).detach();
  measure(
      state, mode, {x}, dy, [&] { return nn::gelu(x); }, [&] { return nn::gelu_reference(x); });
  const double element_bytes = 4.0 * x.numel();
  set_rate(state, mode, 2 * element_bytes, 5 * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, x, dx
}

void cross_entropy(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor logits = leaf({s.rows(), s.vocab}, 9, 2.0);
  Generator generator(10);
  const Tensor targets = randint({s.rows()}, 0, s.vocab, generator);
  measure(
      state, mode, {logits}, ones({}), [&] { return nn::cross_entropy(logits, targets); },
      [&] { return nn::cross_entropy_reference(logits, targets); });
  const double logits_bytes = 4.0 * logits.numel();
  set_rate(state, mode, logits_bytes, 3 * logits_bytes, "GB/s");  // fwd: logits; bwd: logits, dlogits
}

// RoPE on the queries: a (B, NH, T, HS) strided view of the QKV projection.
void rope(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor q = qkv_leaves(s)[0];
  const Tensor dy = leaf({s.batch, s.heads, s.positions, s.head_size()}, 11).detach();
  measure(
      state, mode, {q}, dy, [&] { return nn::rope(q); }, [&] { return nn::rope_reference(q); });
  const double element_bytes = 4.0 * q.numel();
  set_rate(state, mode, 2 * element_bytes, 4 * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, dx (small tables)
}

// Dropout on the residual stream (B, T, C), in training mode. Each call draws a
// new mask (the generator moves on), as in training.
void dropout(benchmark::State& state, const ModelShape& s, Mode mode) {
  const Tensor x = leaf({s.batch, s.positions, s.channels}, 12);
  const Tensor dy = leaf({s.batch, s.positions, s.channels}, 13).detach();
  Generator generator(14);
  measure(
      state, mode, {x}, dy, [&] { return nn::dropout(x, kDropout, true, generator); },
      [&] { return nn::dropout_reference(x, kDropout, true, generator); });
  const double element_bytes = 4.0 * x.numel();
  set_rate(state, mode, 2 * element_bytes, 4 * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, dx (mask recomputed)
}

// One step over every parameter, kept in one flat arena (as the model does).
void adamw(benchmark::State& state, const ModelShape& s) {
  const int64_t count = s.parameters();
  std::vector<float> param(count, 0.5f), grad(count, 0.01f), m(count, 0.0f), v(count, 0.0f);
  const nn::AdamWHyperparameters hyperparameters{.lr = 1e-3f, .beta1 = 0.9f, .beta2 = 0.999f, .eps = 1e-8f, .weight_decay = 0.1f};
  int64_t step = 0;
  for (auto _ : state) nn::adamw_step(param.data(), grad.data(), m.data(), v.data(), count, hyperparameters, ++step);
  set_rate(state, 7.0 * 4 * count, "GB/s");  // reads p, g, m, v; writes p, m, v
}

struct Kernel {
  const char* name;
  void (*run)(benchmark::State&, const ModelShape&, Mode);
};

constexpr Kernel kKernels[] = {{"attention", attention}, {"attention_bf16", attention_bf16},
                               {"layer_norm", layer_norm}, {"rms_norm", rms_norm},
                               {"qk_norm", qk_norm},     {"gelu", gelu},             {"swiglu", swiglu},
                               {"cross_entropy", cross_entropy}, {"rope", rope},     {"dropout", dropout}};

void register_all() {
  for (const ModelShape& s : kShapes) {
    auto add = [&](const std::string& name, auto&& fn) {
      benchmark::RegisterBenchmark((name + "/" + s.name).c_str(), fn)->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    for (const Kernel& kernel : kKernels) {
      const std::string name = kernel.name;
      add(name + "_fwd", [s, kernel](benchmark::State& st) { kernel.run(st, s, Mode::Forward); });
      add(name + "_fwd_bwd", [s, kernel](benchmark::State& st) { kernel.run(st, s, Mode::ForwardBackward); });
      add(name + "_vs_reference", [s, kernel](benchmark::State& st) { kernel.run(st, s, Mode::VsReference); });
    }
    add("adamw_step", [s](benchmark::State& st) { adamw(st, s); });
  }
}

}  // namespace

int main(int argc, char** argv) {
  register_all();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
