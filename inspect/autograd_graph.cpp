#include "tinygpt/inspect/autograd_graph.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/error.h"

namespace tg::inspect {

TensorGlance glance(const Tensor& tensor) {
  TensorGlance seen;
  if (!tensor.defined()) return seen;
  seen.present = true;
  seen.shape = tensor.shape();
  const std::vector<double> values = tensor.detach().to_vector<double>();
  seen.count = static_cast<int64_t>(values.size());
  double squares = 0;
  for (double value : values) squares += value * value;
  seen.norm = std::sqrt(squares);
  seen.first.assign(values.begin(), values.begin() + std::min(values.size(), TensorGlance::kShownValues));
  return seen;
}

GraphRecorder::GraphRecorder() {
  // The output handle itself (not a detached copy), so that a name given to it
  // after the op ran ("n") is seen at finish().
  listener_.emplace([this](const Node& node, const Tensor& output) { outputs_[node.sequence] = output; });
}

AutogradGraph GraphRecorder::finish(const Tensor& output, const Tensor& grad_output,
                                    const std::vector<std::pair<std::string, Tensor>>& leaves) {
  listener_.reset();
  check(output.defined() && output.grad_fn(), "GraphRecorder::finish: the output was not computed by an op on "
        "tensors that require grad, so there is no tape to draw");

  // The tape behind the output, without recursion: every node reachable from its
  // grad_fn, ordered by sequence (creation order); leaves end the paths.
  std::map<uint64_t, std::shared_ptr<Node>> tape;
  std::vector<std::shared_ptr<Node>> pending = {output.grad_fn()};
  while (!pending.empty()) {
    std::shared_ptr<Node> node = std::move(pending.back());
    pending.pop_back();
    if (!tape.emplace(node->sequence, node).second) continue;
    for (const Edge& edge : node->inputs)
      if (edge.node) pending.push_back(edge.node);
  }

  // Nodes in creation order, each leaf placed just before its first reader.
  AutogradGraph graph;
  std::map<uint64_t, size_t> op_index;
  std::map<std::shared_ptr<TensorImpl>, size_t> leaf_index;
  for (const auto& [sequence, node] : tape) {
    GraphNode op{.is_leaf = false, .sequence = sequence, .op = node->op};
    for (const Edge& edge : node->inputs) {
      if (edge.node) {
        op.inputs.push_back(op_index.at(edge.node->sequence));  // created earlier, so already placed
      } else if (edge.leaf) {
        auto [found, added] = leaf_index.emplace(edge.leaf, graph.nodes.size());
        if (added) {
          GraphNode leaf{.is_leaf = true, .op = "leaf"};
          const Tensor tensor(edge.leaf);
          leaf.label = tensor.name().empty() ? "leaf" : tensor.name();
          for (const auto& [name, named] : leaves)
            if (named.is_same(tensor)) leaf.label = name;
          leaf.value = glance(tensor);
          graph.nodes.push_back(std::move(leaf));
        }
        op.inputs.push_back(found->second);
      }
    }
    if (const auto heard = outputs_.find(sequence); heard != outputs_.end()) {
      op.label = heard->second.name();
      op.value = glance(heard->second);
    }
    op_index[sequence] = graph.nodes.size();
    graph.nodes.push_back(std::move(op));
  }
  outputs_.clear();

  backward_observed(output, grad_output, [&](const Node& node, const Tensor& grad) {
    if (const auto found = op_index.find(node.sequence); found != op_index.end())
      graph.nodes[found->second].gradient = glance(grad);
  });
  for (const auto& [impl, index] : leaf_index) graph.nodes[index].gradient = glance(Tensor(impl).grad());
  return graph;
}

}  // namespace tg::inspect
