// The fused GPT kernels (nn/functional/), forward and forward+backward, at two
// model shapes. bench/torch_kernels.py times PyTorch's equivalents at the same
// shapes and bench/run_kernels.sh interleaves the two and prints the ratios.
//
// Each benchmark reports one rate counter, "rate", in the unit named by its label:
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

#include <string>
#include <vector>

#include "autograd/node.h"
#include "autograd/ops.h"
#include "nn/functional/adamw.h"
#include "nn/functional/attention.h"
#include "nn/functional/cross_entropy.h"
#include "nn/functional/gelu.h"
#include "nn/functional/layer_norm.h"
#include "tensor/view.h"

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

// The gradients of the op that made y, for upstream gradient dy, every input wanting one.
void run_backward(const Tensor& y, const Tensor& dy) {
  const Node& node = *y.grad_fn();
  benchmark::DoNotOptimize(node.backward(dy, std::vector<bool>(node.inputs.size(), true)));
}

void set_rate(benchmark::State& state, double work_per_iteration, const char* unit) {
  state.counters["rate"] = benchmark::Counter(work_per_iteration * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  state.SetLabel(unit);
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

void attention(benchmark::State& state, const ModelShape& s, bool with_backward) {
  const std::vector<Tensor> qkv = qkv_leaves(s);
  Generator generator(2);
  const Tensor dy = randn({s.batch, s.positions, s.channels}, generator);
  for (auto _ : state) {
    if (with_backward) {
      run_backward(nn::causal_attention(qkv[0], qkv[1], qkv[2]), dy);
    } else {
      NoGradGuard no_grad;
      benchmark::DoNotOptimize(nn::causal_attention(qkv[0], qkv[1], qkv[2]));
    }
  }
  const double dense_flops = 4.0 * s.batch * s.heads * s.positions * s.positions * s.head_size();
  set_rate(state, with_backward ? 3 * dense_flops : dense_flops, "GFLOP/s");
}

void layer_norm(benchmark::State& state, const ModelShape& s, bool with_backward) {
  const Tensor x = leaf({s.batch, s.positions, s.channels}, 3);
  const Tensor weight = leaf({s.channels}, 4), bias = leaf({s.channels}, 5);
  const Tensor dy = leaf({s.batch, s.positions, s.channels}, 6).detach();
  for (auto _ : state) {
    if (with_backward) {
      run_backward(nn::layer_norm(x, weight, bias), dy);
    } else {
      NoGradGuard no_grad;
      benchmark::DoNotOptimize(nn::layer_norm(x, weight, bias));
    }
  }
  const double element_bytes = 4.0 * s.rows() * s.channels;
  set_rate(state, (with_backward ? 5 : 2) * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, x, dx
}

void gelu(benchmark::State& state, const ModelShape& s, bool with_backward) {
  const Tensor x = leaf({s.batch, s.positions, 4 * s.channels}, 7);  // the MLP's hidden activation
  const Tensor dy = leaf({s.batch, s.positions, 4 * s.channels}, 8).detach();
  for (auto _ : state) {
    if (with_backward) {
      run_backward(nn::gelu(x), dy);
    } else {
      NoGradGuard no_grad;
      benchmark::DoNotOptimize(nn::gelu(x));
    }
  }
  const double element_bytes = 4.0 * x.numel();
  set_rate(state, (with_backward ? 5 : 2) * element_bytes, "GB/s");  // fwd: x, y; bwd: dy, x, dx
}

void cross_entropy(benchmark::State& state, const ModelShape& s, bool with_backward) {
  const Tensor logits = leaf({s.rows(), s.vocab}, 9, 2.0);
  Generator generator(10);
  const Tensor targets = randint({s.rows()}, 0, s.vocab, generator);
  for (auto _ : state) {
    if (with_backward) {
      run_backward(nn::cross_entropy(logits, targets), ones({}));
    } else {
      NoGradGuard no_grad;
      benchmark::DoNotOptimize(nn::cross_entropy(logits, targets));
    }
  }
  const double logits_bytes = 4.0 * logits.numel();
  set_rate(state, (with_backward ? 3 : 1) * logits_bytes, "GB/s");  // fwd: logits; bwd: logits, dlogits
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

void register_all() {
  for (const ModelShape& s : kShapes) {
    auto add = [&](const std::string& kernel, auto&& fn) {
      benchmark::RegisterBenchmark((kernel + "/" + s.name).c_str(), fn)->Unit(benchmark::kMillisecond)->UseRealTime();
    };
    add("attention_fwd", [s](benchmark::State& st) { attention(st, s, false); });
    add("attention_fwd_bwd", [s](benchmark::State& st) { attention(st, s, true); });
    add("layer_norm_fwd", [s](benchmark::State& st) { layer_norm(st, s, false); });
    add("layer_norm_fwd_bwd", [s](benchmark::State& st) { layer_norm(st, s, true); });
    add("gelu_fwd", [s](benchmark::State& st) { gelu(st, s, false); });
    add("gelu_fwd_bwd", [s](benchmark::State& st) { gelu(st, s, true); });
    add("cross_entropy_fwd", [s](benchmark::State& st) { cross_entropy(st, s, false); });
    add("cross_entropy_fwd_bwd", [s](benchmark::State& st) { cross_entropy(st, s, true); });
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
