// Optimisers, the learning-rate schedule and gradient clipping against hand-computed values.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/embedding.h"
#include "tinygpt/nn/layer_norm.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/optim/adamw.h"
#include "tinygpt/nn/optim/clip.h"
#include "tinygpt/nn/optim/schedule.h"
#include "tinygpt/nn/optim/sgd.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/nn/positional.h"
#include "tinygpt/tensor/view.h"

using namespace tg;
using namespace tg::nn;

namespace {

Tensor parameter(const std::vector<float>& values, const Shape& shape) {
  Tensor tensor = from_vector(values, shape);
  tensor.set_requires_grad();
  return tensor;
}

void set_grad(Tensor tensor, const std::vector<float>& values) { tensor.set_grad(from_vector(values, tensor.shape())); }

// Writes into a gradient that lives in a ParameterArena (set_grad would replace the view).
void write_grad(const Tensor& tensor, const std::vector<float>& values) {
  raw::copy_(tensor.grad(), from_vector(values, tensor.shape()));
}

// A module that only holds the given parameters, under the given names.
class Holder : public Module {
 public:
  explicit Holder(const std::vector<std::pair<std::string, Tensor>>& named) {
    for (const auto& [name, tensor] : named) register_parameter(name, tensor);
  }
  std::string describe() const override { return "Holder"; }
};

// A stand-in for a GPT's parameter kinds: wte, wpe, a Linear, a LayerNorm.
class Kinds : public Module {
 public:
  Kinds() {
    register_module("wte", std::make_shared<Embedding>(3, 2));
    register_module("wpe", std::make_shared<LearnedPositions>(4, 2));
    register_module("fc", std::make_shared<Linear>(2, 2));
    register_module("ln", std::make_shared<LayerNorm>(2));
  }
  std::string describe() const override { return "Kinds"; }
};

// torch.optim.AdamW's update in double precision, one element.
struct AdamReference {
  double p, m = 0, v = 0;
  void step(double g, int64_t t, double lr, double beta1, double beta2, double eps, double decay) {
    p *= 1 - lr * decay;
    m = beta1 * m + (1 - beta1) * g;
    v = beta2 * v + (1 - beta2) * g * g;
    const double m_hat = m / (1 - std::pow(beta1, t)), v_hat = v / (1 - std::pow(beta2, t));
    p -= lr * m_hat / (std::sqrt(v_hat) + eps);
  }
};

}  // namespace

TEST_CASE("AdamW: three steps match the formula computed in double precision") {
  const Tensor weight = parameter({1.0f, -2.0f}, {1, 2});  // 2-D: decays
  const Tensor bias = parameter({0.5f}, {1});              // 1-D: does not
  AdamWOptions options;
  options.lr = 0.1;
  options.beta1 = 0.9;
  options.beta2 = 0.999;
  options.weight_decay = 0.1;
  Holder holder({{"weight", weight}, {"bias", bias}});
  ParameterArena arena(holder);
  AdamW adamw(arena, options);
  AdamReference w0{1.0}, w1{-2.0}, b0{0.5};
  const std::vector<std::vector<float>> grads{{0.5f, 0.1f, -0.3f}, {-0.2f, 0.4f, 0.3f}, {0.05f, -0.7f, 0.0f}};
  for (int64_t t = 1; t <= 3; ++t) {
    const std::vector<float>& g = grads[t - 1];
    write_grad(weight, {g[0], g[1]});
    write_grad(bias, {g[2]});
    adamw.step();
    w0.step(g[0], t, 0.1, 0.9, 0.999, 1e-8, 0.1);
    w1.step(g[1], t, 0.1, 0.9, 0.999, 1e-8, 0.1);
    b0.step(g[2], t, 0.1, 0.9, 0.999, 1e-8, 0.0);
    const std::vector<float> w = weight.to_vector<float>();
    CHECK(w[0] == doctest::Approx(w0.p).epsilon(1e-6));
    CHECK(w[1] == doctest::Approx(w1.p).epsilon(1e-6));
    CHECK(bias.item<float>() == doctest::Approx(b0.p).epsilon(1e-6));
  }
  CHECK(adamw.state().step == 3);
  CHECK(adamw.state().m.shape() == Shape{3});
  CHECK(adamw.state().m.to_vector<float>()[2] == doctest::Approx(b0.m).epsilon(1e-6));
  CHECK(adamw.state().v.to_vector<float>()[0] == doctest::Approx(w0.v).epsilon(1e-5));
}

TEST_CASE("AdamW: decay groups — 2-D weights decay; biases, LayerNorm and wpe do not unless asked") {
  Kinds model;
  ParameterArena arena(model);
  AdamW adamw(arena, AdamWOptions{});
  CHECK(adamw.decayed_names() == std::vector<std::string>{"wte.weight", "fc.weight"});
  CHECK(adamw.undecayed_names() == std::vector<std::string>{"wpe.weight", "fc.bias", "ln.weight", "ln.bias"});
  AdamWOptions with_positions;
  with_positions.decay_position_embeddings = true;
  CHECK(AdamW(arena, with_positions).decayed_names() == std::vector<std::string>{"wte.weight", "wpe.weight", "fc.weight"});

  // With zero gradients only the decayed parameters move: p *= 1 - lr * weight_decay.
  fill_(arena.params(), 1.0);
  AdamWOptions options;
  options.lr = 0.5;
  options.weight_decay = 0.2;
  AdamW decaying(arena, options);
  decaying.step();
  const std::vector<float> params = arena.params().to_vector<float>();
  for (size_t i = 0; i < arena.named_parameters().size(); ++i) {
    const auto& [name, tensor] = arena.named_parameters()[i];
    const float expected = name == "wte.weight" || name == "fc.weight" ? 0.9f : 1.0f;
    for (int64_t k = 0; k < tensor.numel(); ++k) CHECK(params[arena.offsets()[i] + k] == expected);
  }
}

TEST_CASE("AdamW: a restored state continues exactly like the original") {
  Kinds original_model, restored_model;
  ParameterArena original_arena(original_model), restored_arena(restored_model);
  Generator generator(1);
  raw::copy_(original_arena.params(), randn({original_arena.params().numel()}, generator));
  raw::copy_(restored_arena.params(), original_arena.params());
  AdamW original(original_arena, AdamWOptions{});
  for (int step = 0; step < 2; ++step) {
    raw::copy_(original_arena.grads(), randn({original_arena.grads().numel()}, generator));
    original.step();
  }
  raw::copy_(restored_arena.params(), original_arena.params());
  AdamW restored(restored_arena, AdamWOptions{});
  restored.load_state(original.state().m, original.state().v, original.state().step);
  const Tensor grads = randn({original_arena.grads().numel()}, generator);
  raw::copy_(original_arena.grads(), grads);
  raw::copy_(restored_arena.grads(), grads);
  original.step();
  restored.step();
  CHECK(original_arena.params().to_vector<float>() == restored_arena.params().to_vector<float>());
  CHECK(restored.state().step == 3);
  CHECK_THROWS_WITH_AS(restored.load_state(zeros({3}), zeros({3}), 1), doctest::Contains("m and v must have shape"), Error);
}

TEST_CASE("SGD with momentum: buf = momentum buf + g, p -= lr buf") {
  const Tensor p = parameter({1, 2}, {2});
  Holder holder({{"p", p}});
  ParameterArena arena(holder);
  SGD sgd(arena, SGDOptions{0.1, 0.9, 0.0});
  write_grad(p, {0.5, -1});
  sgd.step();  // buf = g
  CHECK(p.to_vector<float>()[0] == doctest::Approx(0.95));
  CHECK(p.to_vector<float>()[1] == doctest::Approx(2.1));
  sgd.step();  // buf = 1.9 g
  CHECK(p.to_vector<float>()[0] == doctest::Approx(0.855));
  CHECK(p.to_vector<float>()[1] == doctest::Approx(2.29));
  CHECK(sgd.momentum_buffer().to_vector<float>()[1] == doctest::Approx(-1.9));
}

TEST_CASE("SGD: plain steps and L2 weight decay, over an arena") {
  Kinds model;
  ParameterArena arena(model);
  fill_(arena.params(), 2.0);
  fill_(arena.grads(), 1.0);
  SGD sgd(arena, SGDOptions{0.1, 0.0, 0.5});
  sgd.step();  // p -= 0.1 * (1 + 0.5 * 2)
  for (float value : arena.params().to_vector<float>()) CHECK(value == doctest::Approx(1.8));
}

TEST_CASE("cosine schedule: nanoGPT's warm-up, cosine and floor") {
  LearningRateSchedule schedule{ScheduleShape::Cosine, 1e-3, 1e-4, 10, 110};
  CHECK(schedule.at(0) == doctest::Approx(1e-3 / 11));
  CHECK(schedule.at(9) == doctest::Approx(1e-3 * 10 / 11));
  CHECK(schedule.at(10) == doctest::Approx(1e-3));
  CHECK(schedule.at(60) == doctest::Approx(5.5e-4));
  CHECK(schedule.at(35) == doctest::Approx(1e-4 + 0.5 * (1 + std::cos(M_PI / 4)) * 9e-4));
  CHECK(schedule.at(110) == doctest::Approx(1e-4));
  CHECK(schedule.at(5000) == doctest::Approx(1e-4));
  const LearningRateSchedule no_decay{ScheduleShape::Cosine, 1e-3, 1e-4, 5, 5};
  CHECK(no_decay.at(5) == doctest::Approx(1e-4));
  CHECK_THROWS_WITH_AS((LearningRateSchedule{ScheduleShape::Cosine, 1e-3, 1e-4, 20, 10}.validate()), doctest::Contains("warmup_iters <= decay_iters"),
                       Error);
}

TEST_CASE("warmup-stable-decay schedule: warm-up, constant, a linear cool-down over the last fraction, floor") {
  const LearningRateSchedule schedule{ScheduleShape::WarmupStableDecay, 1e-3, 1e-4, 10, 110, 0.5};
  CHECK(schedule.cooldown_start() == 55);
  CHECK(schedule.at(0) == doctest::Approx(1e-3 / 11));  // the cosine's warm-up
  CHECK(schedule.at(10) == 1e-3);
  CHECK(schedule.at(54) == 1e-3);
  CHECK(schedule.at(55) == 1e-3);                         // the cool-down starts at max_lr
  CHECK(schedule.at(56) == doctest::Approx(1e-3 - 9e-4 / 55));
  CHECK(schedule.at(109) == doctest::Approx(1e-4 + 9e-4 / 55));
  CHECK(schedule.at(110) == doctest::Approx(1e-4));
  CHECK(schedule.at(500) == doctest::Approx(1e-4));
  // A cool-down longer than the time after the warm-up starts at the warm-up's end.
  const LearningRateSchedule all_cooldown{ScheduleShape::WarmupStableDecay, 1e-3, 0, 20, 100, 1.0};
  CHECK(all_cooldown.cooldown_start() == 20);
  CHECK(all_cooldown.at(60) == doctest::Approx(5e-4));
  CHECK_THROWS_WITH_AS((LearningRateSchedule{ScheduleShape::WarmupStableDecay, 1e-3, 1e-4, 1, 10, 1.5}.validate()),
                       doctest::Contains("cooldown must be in [0, 1]"), Error);
}

TEST_CASE("AdamW leaves out the parameters another optimiser takes: they do not move and have no moments") {
  Kinds model;
  ParameterArena arena(model);
  fill_(arena.params(), 1.0);
  fill_(arena.grads(), 0.5);
  AdamW adamw(arena, AdamWOptions{}, {"wpe.weight", "fc.weight"});
  CHECK(adamw.decayed_names() == std::vector<std::string>{"wte.weight"});
  CHECK(adamw.undecayed_names() == std::vector<std::string>{"fc.bias", "ln.weight", "ln.bias"});
  adamw.step();
  AdamW everything(arena, AdamWOptions{});  // the same step of every parameter, for comparison
  int64_t kept = 0;
  std::vector<std::string> state_names;
  for (const NamedTensor& tensor : adamw.state_tensors()) state_names.push_back(tensor.name);
  for (size_t i = 0; i < arena.named_parameters().size(); ++i) {
    const auto& [name, tensor] = arena.named_parameters()[i];
    const bool left_out = name == "wpe.weight" || name == "fc.weight";
    const std::vector<float> values = tensor.to_vector<float>();
    for (float value : values) CHECK((value == 1.0f) == left_out);
    if (!left_out) kept += tensor.numel();
    const bool has_moments = std::count(state_names.begin(), state_names.end(), "optimizer.m." + name) == 1;
    CHECK(has_moments == !left_out);
  }
  CHECK(adamw.state().m.numel() == kept);
  // The moments of the kept parameters sit back to back: each named view holds its own (the first moment is 0.05).
  for (const NamedTensor& tensor : adamw.state_tensors())
    if (tensor.name.starts_with("optimizer.m."))
      for (float value : tensor.tensor.to_vector<float>()) CHECK(value == doctest::Approx(0.05));
  CHECK_THROWS_WITH_AS(AdamW(arena, AdamWOptions{}, {"no.such.weight"}), doctest::Contains("not in the arena"), Error);
}

TEST_CASE("clip_grad_norm: returns the norm, scales by max_norm / (norm + 1e-6) only when above") {
  const Tensor a = parameter({0}, {1}), b = parameter({0}, {1}), no_grad = parameter({0}, {1});
  set_grad(a, {3});
  set_grad(b, {4});
  CHECK(clip_grad_norm({a, b, no_grad}, 10.0) == doctest::Approx(5.0));
  CHECK(a.grad().item<float>() == 3.0f);  // untouched
  CHECK(grad_norm({a, b}) == doctest::Approx(5.0));
  CHECK(clip_grad_norm({a, b}, 1.0) == doctest::Approx(5.0));
  CHECK(a.grad().item<float>() == doctest::Approx(3.0 / (5.0 + 1e-6)));
  CHECK(b.grad().item<float>() == doctest::Approx(4.0 / (5.0 + 1e-6)));
  CHECK(grad_norm({a, b}) == doctest::Approx(1.0));
  CHECK_THROWS_WITH_AS(clip_grad_norm({a}, 0.0), doctest::Contains("max_norm must be positive"), Error);
}

TEST_CASE("clip_grad_norm over an arena: one buffer, the same norm as the parameter list") {
  Kinds model;
  ParameterArena arena(model);
  Generator generator(2);
  raw::copy_(arena.grads(), randn({arena.grads().numel()}, generator));
  const double by_list = grad_norm(model.parameters());
  CHECK(clip_grad_norm(arena, 0.5) == doctest::Approx(by_list));
  CHECK(grad_norm(model.parameters()) == doctest::Approx(0.5).epsilon(1e-5));
}

TEST_CASE("AdamW and SGD steps count as in-place writes: a kept graph over the old weights is refused") {
  for (const bool adam : {true, false}) {
    Kinds model;
    ParameterArena arena(model);
    Tensor weight;
    for (const auto& [name, parameter] : arena.named_parameters())
      if (name == "fc.weight") weight = parameter;
    Tensor x = ones({2, weight.size(1)});
    x.set_requires_grad();  // dx reads the weight, so linear saves it
    const Tensor loss = sum(linear(x, weight, Tensor()));
    backward(loss, Tensor(), /*keep_graph=*/true);
    if (adam) AdamW(arena, AdamWOptions{}).step();
    else SGD(arena, SGDOptions{}).step();
    CHECK_THROWS_WITH_AS(backward(loss), doctest::Contains("was changed in place after it ran"), Error);
  }
}
