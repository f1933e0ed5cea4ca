// The autograd graph (inspect/autograd_graph.h, autograd_graph_examples.h,
// autograd_graph_page.h): micrograd's neuron with micrograd's gradients and a
// central difference; a block's tape with its ops, in creation order, each
// gradient of its value's shape; the page's hooks.
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <set>
#include <string>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/autograd_graph.h"
#include "tinygpt/inspect/autograd_graph_examples.h"
#include "tinygpt/inspect/autograd_graph_page.h"
#include "tests/inspect/walkthrough_fixture.h"

using namespace tg;
using namespace tg::inspect;

namespace {

const GraphNode& named(const AutogradGraph& graph, const std::string& label) {
  for (const GraphNode& node : graph.nodes)
    if (node.label == label) return node;
  FAIL("no node labelled " << label);
  return graph.nodes.front();
}

// o = tanh(x1*w1 + x2*w2 + b) with the engine's ops on float64 scalars, outside any graph.
double neuron(std::map<std::string, double> at) {
  NoGradGuard no_grad;
  auto s = [&](const char* name) { return scalar(at.at(name), DType::Float64); };
  return tanh(s("x1") * s("w1") + s("x2") * s("w2") + s("b")).item<double>();
}

void check_creation_order(const AutogradGraph& graph) {
  uint64_t previous = 0;
  bool first = true;
  for (size_t index = 0; index < graph.nodes.size(); ++index) {
    const GraphNode& node = graph.nodes[index];
    for (size_t input : node.inputs) CHECK(input < index);  // an input is drawn before its readers
    if (node.is_leaf) continue;
    if (!first) CHECK(node.sequence > previous);
    previous = node.sequence;
    first = false;
  }
}

}  // namespace

TEST_CASE("autograd graph: micrograd's neuron has micrograd's values and gradients") {
  const AutogradGraph graph = neuron_graph();
  // Leaves x1, w1 before the first mul, x2, w2 before the second, b before the second add.
  std::vector<std::string> drawn;
  for (const GraphNode& node : graph.nodes) drawn.push_back(node.is_leaf ? node.label : node.op);
  CHECK(drawn == std::vector<std::string>{"x1", "w1", "mul", "x2", "w2", "mul", "add", "b", "add", "tanh"});
  check_creation_order(graph);

  const std::map<std::string, double> values = {{"x1", 2}, {"x2", 0}, {"w1", -3}, {"w2", 1}, {"b", 6.8813735870195432}};
  const std::map<std::string, double> micrograd = {{"x1", -1.5}, {"w1", 1.0}, {"x2", 0.5}, {"w2", 0.0}, {"b", 0.5}};
  const double h = 1e-6;
  for (const auto& [name, expected] : micrograd) {
    CAPTURE(name);
    const GraphNode& leaf = named(graph, name);
    REQUIRE(leaf.gradient.present);
    CHECK(leaf.value.first.at(0) == values.at(name));
    CHECK(leaf.gradient.first.at(0) == doctest::Approx(expected).epsilon(1e-12));
    std::map<std::string, double> up = values, down = values;
    up[name] += h;
    down[name] -= h;
    CHECK(leaf.gradient.first.at(0) == doctest::Approx((neuron(up) - neuron(down)) / (2 * h)).epsilon(1e-8));
  }
  const GraphNode& o = named(graph, "o");
  CHECK(o.op == "tanh");
  CHECK(o.value.first.at(0) == doctest::Approx(0.7071067811865476).epsilon(1e-12));
  CHECK(o.gradient.first.at(0) == 1.0);                                         // do/do
  CHECK(named(graph, "n").gradient.first.at(0) == doctest::Approx(0.5).epsilon(1e-12));  // 1 - o^2
  CHECK(named(graph, "x1*w1").value.first.at(0) == -6.0);
  CHECK(named(graph, "x1*w1").gradient.first.at(0) == doctest::Approx(0.5).epsilon(1e-12));
}

TEST_CASE("autograd graph: a tensor read twice gets the sum of its shares") {
  Tensor x = scalar(3.0, DType::Float64);
  x.set_requires_grad();
  GraphRecorder recorder;
  const Tensor y = x * x + x;  // dy/dx = 2x + 1 = 7
  const AutogradGraph graph = recorder.finish(y, Tensor(), {{"x", x}});
  REQUIRE(graph.nodes.size() == 3);
  CHECK(graph.nodes[1].inputs == std::vector<size_t>{0, 0});  // mul reads x twice
  CHECK(graph.nodes[2].inputs == std::vector<size_t>{1, 0});
  CHECK(graph.nodes[0].gradient.first.at(0) == 7.0);
  CHECK(graph.nodes[0].label == "x");
}

TEST_CASE("autograd graph: a leaf not in the list goes by its tensor's name, else 'leaf'") {
  Tensor named_leaf = scalar(2.0), unnamed = scalar(5.0);
  named_leaf.set_requires_grad().set_name("scale");
  unnamed.set_requires_grad();
  GraphRecorder recorder;
  const AutogradGraph graph = recorder.finish(named_leaf * unnamed, Tensor(), {});
  REQUIRE(graph.nodes.size() == 3);
  CHECK(graph.nodes[0].label == "scale");
  CHECK(graph.nodes[1].label == "leaf");
  CHECK(graph.nodes[1].gradient.first.at(0) == 2.0);
}

TEST_CASE("autograd graph: an output no op computed is refused") {
  GraphRecorder recorder;
  CHECK_THROWS_WITH_AS(recorder.finish(scalar(1.0), Tensor(), {}), doctest::Contains("no tape to draw"), Error);
}

TEST_CASE("autograd graph: one block's tape, its ops in creation order, every gradient of its value's shape") {
  GPT model(testing::tiny_walkthrough_config(), 5);
  const AutogradGraph graph = block_graph(model, testing::tiny_tokenizer(), "abc d", "", 1);
  check_creation_order(graph);
  std::multiset<std::string> ops;
  std::set<std::string> leaves;
  for (const GraphNode& node : graph.nodes) {
    CAPTURE(node.op);
    CAPTURE(node.label);
    if (node.is_leaf) leaves.insert(node.label);
    else ops.insert(node.op);
    REQUIRE(node.value.present);
    REQUIRE(node.gradient.present);
    CHECK(node.gradient.shape == node.value.shape);
    CHECK(std::isfinite(node.gradient.norm));
  }
  // ln_1, ln_2; q k^T and w v; qkv, c_proj, c_fc, c_proj_mlp; the two residual adds.
  for (const auto& [op, expected] : std::map<std::string, size_t>{{"layer_norm", 2}, {"matmul", 2}, {"masked_fill", 1},
                                                                   {"softmax", 1}, {"gelu(tanh)", 1},
                                                                   {"linear_product", 4}, {"add", 2}}) {
    CAPTURE(op);
    CHECK(ops.count(op) == expected);
  }
  CHECK(leaves.count("x (the stream entering block 1)") == 1);
  CHECK(leaves.count("blocks.1.attn.qkv.weight") == 1);
  CHECK(leaves.count("blocks.0.attn.qkv.weight") == 0);  // another block's
  // The block's output: the last op, its gradient the loss's, handed in from above.
  CHECK(graph.nodes.back().value.shape == Shape{1, 5, model.config().n_embd});
  CHECK_THROWS_WITH_AS(block_graph(model, testing::tiny_tokenizer(), "a", "", 0),
                       doctest::Contains("needs 2 or more"), Error);
  CHECK_THROWS_WITH_AS(block_graph(model, testing::tiny_tokenizer(), "ab", "", 2),
                       doctest::Contains("block 2 does not exist"), Error);
}

TEST_CASE("autograd graph page: one section per graph, a box per node, the controls, no network") {
  const AutogradGraph graph = neuron_graph();
  const std::string page = render_autograd_graph_page({graph, graph}, "a <model>");
  auto count = [&](const std::string& part) {
    size_t found = 0;
    for (size_t at = page.find(part); at != std::string::npos; at = page.find(part, at + 1)) ++found;
    return found;
  };
  CHECK(count("<section class=\"graph\"") == 2);
  CHECK(count("<g class=\"node\"") == 2 * graph.nodes.size());
  CHECK(count("<button class=\"step\">") == 2);
  CHECK(count("<path class=\"edge\"") == 2 * 9);  // one per input: mul 2, mul 2, add 2, add 2, tanh 1
  CHECK(page.find("a &lt;model&gt;") != std::string::npos);
  CHECK(page.find("http://") == std::string::npos);
  CHECK(page.find("https://") == std::string::npos);
  CHECK(glance_text(graph.nodes.back().value, 3) == "0.70711");
}

TEST_CASE("autograd graph page: a tensor's glance: shape, norm, the first values") {
  const TensorGlance seen = glance(from_vector<float>({3, 4, 0, 0}, {2, 2}));
  CHECK(seen.norm == 5.0);
  CHECK(glance_text(seen, 2) == "(2, 2) norm 5: 3, 4, ...");
  CHECK(glance_text(TensorGlance{}, 2) == "(none)");
}
