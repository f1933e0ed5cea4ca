// Module registry, train/eval, zero_grad, printing, and the ParameterArena.
#include <doctest/doctest.h>

#include <sstream>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/nn/block.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/module_list.h"
#include "tinygpt/nn/parameter_arena.h"

using namespace tg;
using namespace tg::nn;

namespace {

// Two layers and a scale, to exercise nesting: own parameters first, then children.
class TwoLayers : public Module {
 public:
  TwoLayers() {
    scale = register_parameter("scale", ones({3}));
    first = register_module("first", std::make_shared<Linear>(2, 3));
    second = register_module("second", std::make_shared<Linear>(3, 1, false));
  }
  Tensor forward(const Tensor& x) const { return second->forward(first->forward(x) * scale); }
  std::string describe() const override { return "TwoLayers"; }

  Tensor scale;
  std::shared_ptr<Linear> first, second;
};

std::vector<std::string> names_of(const std::vector<std::pair<std::string, Tensor>>& named) {
  std::vector<std::string> names;
  for (const auto& [name, tensor] : named) names.push_back(name);
  return names;
}

TransformerOptions tiny_options() {
  TransformerOptions options;
  options.n_embd = 8;
  options.n_head = 2;
  return options;
}

}  // namespace

TEST_CASE("named_parameters: dotted paths, own parameters first, then children in registration order") {
  TwoLayers model;
  CHECK(names_of(model.named_parameters()) ==
        std::vector<std::string>{"scale", "first.weight", "first.bias", "second.weight"});
  CHECK(model.parameter_count() == 3 + 6 + 3 + 3);
  CHECK(model.parameters().size() == 4);
  for (const Tensor& parameter : model.parameters()) CHECK(parameter.requires_grad());
}

TEST_CASE("named_parameters of a block: the paths a GPT's checkpoint uses") {
  Block block(tiny_options(), std::make_shared<Generator>(0));
  CHECK(names_of(block.named_parameters()) ==
        std::vector<std::string>{"ln_1.weight", "ln_1.bias", "attn.qkv.weight", "attn.qkv.bias", "attn.c_proj.weight",
                                 "attn.c_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.c_fc.weight", "mlp.c_fc.bias",
                                 "mlp.c_proj.weight", "mlp.c_proj.bias"});
  CHECK(block.parameter_count() == 12 * 8 * 8 + 13 * 8);
}

TEST_CASE("ModuleList names children by index") {
  ModuleList list;
  list.append(std::make_shared<Linear>(2, 2));
  list.append(std::make_shared<Linear>(2, 2, false));
  CHECK(names_of(list.named_parameters()) == std::vector<std::string>{"0.weight", "0.bias", "1.weight"});
}

TEST_CASE("a tensor registered under two names is one parameter") {
  class Tied : public Module {
   public:
    Tied() {
      const Tensor shared = zeros({2, 2});
      register_parameter("a", shared);
      register_parameter("b", shared);
    }
    std::string describe() const override { return "Tied"; }
  } tied;
  CHECK(names_of(tied.named_parameters()) == std::vector<std::string>{"a"});
  CHECK(tied.parameter_count() == 4);
}

TEST_CASE("registering a name twice or a dotted name throws") {
  class Bad : public Module {
   public:
    void add(const std::string& name) { register_parameter(name, zeros({1})); }
    std::string describe() const override { return "Bad"; }
  } bad;
  bad.add("w");
  CHECK_THROWS_WITH_AS(bad.add("w"), doctest::Contains("already registered"), Error);
  CHECK_THROWS_WITH_AS(bad.add("a.b"), doctest::Contains("contain no '.'"), Error);
}

TEST_CASE("train and eval switch the whole tree") {
  TwoLayers model;
  CHECK(model.is_training());
  model.eval();
  CHECK_FALSE(model.is_training());
  CHECK_FALSE(model.first->is_training());
  model.train();
  CHECK(model.second->is_training());
}

TEST_CASE("Module::zero_grad zero-fills existing gradients in place") {
  TwoLayers model;
  backward(sum(model.forward(ones({4, 2}))));
  const Tensor grad = model.first->weight().grad();
  REQUIRE(grad.defined());
  model.zero_grad();
  CHECK(model.first->weight().grad().is_same(grad));
  for (float value : grad.to_vector<float>()) CHECK(value == 0.0f);
}

TEST_CASE("print_tree lists every module with its parameters' shapes") {
  TwoLayers model;
  std::ostringstream out;
  print_tree(out, model);
  CHECK(out.str() ==
        "TwoLayers  scale (3,)\n"
        "  first: Linear(in=2, out=3, bias)  weight (3, 2), bias (3,)\n"
        "  second: Linear(in=3, out=1, no bias)  weight (1, 3)\n");
}

TEST_CASE("ParameterArena: parameters move into one buffer, gradients are views of another") {
  TwoLayers model;
  fill_(model.first->weight(), 2.0);
  const Tensor weight_handle = model.first->weight();  // a handle taken before the move
  ParameterArena arena(model);
  CHECK(arena.params().shape() == Shape{model.parameter_count()});
  CHECK(arena.grads().shape() == Shape{model.parameter_count()});
  CHECK(arena.offsets() == std::vector<int64_t>{0, 3, 9, 12});
  // The old handle sees the new place and keeps its value.
  CHECK(weight_handle.storage() == arena.params().storage());
  CHECK(weight_handle.offset() == 3);
  CHECK(weight_handle.to_vector<float>() == std::vector<float>(6, 2.0f));
  CHECK(arena.params().to_vector<float>()[3] == 2.0f);
  for (const Tensor& parameter : model.parameters()) {
    REQUIRE(parameter.grad().defined());
    CHECK(parameter.grad().storage() == arena.grads().storage());
  }
}

TEST_CASE("ParameterArena: backward accumulates into the grads buffer; zero_grad clears it") {
  TwoLayers model;
  fill_(model.first->weight(), 0.5);
  fill_(model.second->weight(), 1.0);
  ParameterArena arena(model);
  const Tensor x = from_vector<float>({1, 2, 3, 4}, {2, 2});
  // h = x W1^T = [[1.5] * 3, [3.5] * 3]; out = sum(h * scale @ W2^T), so
  // d out / d W2 = column sums of h = (5, 5, 5), in the last three arena slots.
  backward(sum(model.forward(x)));
  CHECK(model.second->weight().grad().to_vector<float>() == std::vector<float>{5, 5, 5});
  const std::vector<float> once = arena.grads().to_vector<float>();
  CHECK(std::vector<float>(once.end() - 3, once.end()) == std::vector<float>{5, 5, 5});
  backward(sum(model.forward(x)));
  const std::vector<float> twice = arena.grads().to_vector<float>();
  for (size_t i = 0; i < once.size(); ++i) CHECK(twice[i] == doctest::Approx(2 * once[i]));
  arena.zero_grad();
  for (float value : arena.grads().to_vector<float>()) CHECK(value == 0.0f);
  CHECK(model.first->weight().grad().storage() == arena.grads().storage());
}

TEST_CASE("ParameterArena: mixed dtypes are refused") {
  class Mixed : public Module {
   public:
    Mixed() {
      register_parameter("a", zeros({1}));
      register_parameter("b", zeros({1}, DType::Float64));
    }
    std::string describe() const override { return "Mixed"; }
  } mixed;
  CHECK_THROWS_WITH_AS(ParameterArena{mixed}, doctest::Contains("one arena holds one dtype"), Error);
}

TEST_CASE("ParameterLayout: one layout places every (P,) buffer; views carry each parameter's shape") {
  TwoLayers model;
  const ParameterLayout layout(model.named_parameters());
  REQUIRE(layout.slots().size() == 4);
  CHECK(layout.total() == model.parameter_count());
  CHECK(layout.slots()[1].name == "first.weight");
  CHECK(layout.slots()[1].shape == Shape{3, 2});
  CHECK(layout.slots()[1].offset == 3);
  CHECK(layout.slots()[1].count == 6);
  const Tensor buffer = arange(0, 15, 1, DType::Float32);
  const Tensor first_weight = layout.view(buffer, 1);
  CHECK(first_weight.shape() == Shape{3, 2});
  CHECK(first_weight.storage() == buffer.storage());
  CHECK(first_weight.to_vector<float>() == std::vector<float>{3, 4, 5, 6, 7, 8});
  CHECK(layout.zeros().shape() == Shape{15});
  CHECK_THROWS_WITH_AS(layout.view(zeros({14}), 0), doctest::Contains("the buffer has shape (14,), the layout's is (15,)"),
                       Error);
  CHECK_THROWS_WITH_AS(layout.view(buffer, 4), doctest::Contains("slot 4 of 4"), Error);

  // The arena's parameters sit where its layout says.
  ParameterArena arena(model);
  CHECK(model.first->weight().offset() == arena.layout().slots()[1].offset);
  CHECK(model.first->weight().storage() == arena.params().storage());
}
