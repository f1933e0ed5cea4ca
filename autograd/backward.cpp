#include "tinygpt/autograd/backward.h"

#include <queue>
#include <unordered_map>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/node.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// Adds `grad` into a leaf's .grad. The leaf owns its gradient buffer (a fresh
// contiguous copy the first time), so later in-place updates such as gradient
// clipping can never write through into some other tensor.
void accumulate_into_leaf(Tensor leaf, const Tensor& grad) {
  if (leaf.grad().defined()) raw::add_(leaf.grad(), grad);
  else leaf.set_grad(raw::clone(grad));
}

// The inputs' gradient buffers of the node whose backward runs now (leaf_grad_buffer).
thread_local const std::vector<Tensor>* running_leaf_grads = nullptr;

// Makes `buffers` what leaf_grad_buffer reads while it lives (also when a backward throws).
struct LeafGradsInView {
  explicit LeafGradsInView(const std::vector<Tensor>& buffers) { running_leaf_grads = &buffers; }
  ~LeafGradsInView() { running_leaf_grads = nullptr; }
};

// For each input of `node`: its leaf's gradient buffer when it can take a gradient added in place.
std::vector<Tensor> leaf_grad_buffers(const Node& node) {
  std::vector<Tensor> buffers(node.inputs.size());
  for (size_t i = 0; i < node.inputs.size(); ++i) {
    if (!node.inputs[i].leaf) continue;
    const Tensor grad = Tensor(node.inputs[i].leaf).grad();
    if (grad.defined() && grad.is_contiguous() && grad.shape() == node.input_shapes[i] &&
        grad.dtype() == node.input_dtypes[i])
      buffers[i] = grad;
  }
  return buffers;
}

struct LaterFirst {  // orders the queue so the most recently created node comes out first
  bool operator()(const Node* a, const Node* b) const { return a->sequence < b->sequence; }
};

// backward() and backward_observed(): `observe` may be null.
void run_backward(const Tensor& output, const Tensor& grad_output, bool keep_graph, const NodeGradientObserver* observe) {
  check(output.requires_grad(), "backward: the tensor does not require grad (no input of the ops that made it did)");
  Tensor seed = grad_output;
  if (!seed.defined()) {
    check(output.numel() == 1, "backward: output of shape ", output.shape(),
          " is not a scalar; pass its gradient explicitly");
    seed = ones(output.shape(), output.dtype());
  }
  check(seed.shape() == output.shape(), "backward: gradient of shape ", seed.shape(), " for an output of shape ",
        output.shape());
  check(seed.dtype() == output.dtype(), "backward: gradient dtype ", dtype_name(seed.dtype()), " for an output of dtype ",
        dtype_name(output.dtype()));

  NoGradGuard no_grad;  // backward computes with raw kernels; nothing it does is recorded
  ProfilePassScope pass(ProfilePass::backward);
  if (output.is_leaf()) {
    accumulate_into_leaf(output, seed);
    return;
  }

  // Every node is created after the nodes of its inputs, so taking nodes in
  // decreasing creation order is a reverse topological order: when a node comes
  // out of the queue, every consumer has already added its share to the
  // node's gradient.
  std::unordered_map<Node*, Tensor> pending_grads;
  std::priority_queue<Node*, std::vector<Node*>, LaterFirst> ready;
  std::vector<std::shared_ptr<Node>> visited;  // keeps nodes alive while we work
  Node* root = output.grad_fn().get();
  pending_grads[root] = seed;
  ready.push(root);
  visited.push_back(output.grad_fn());

  while (!ready.empty()) {
    Node* node = ready.top();
    ready.pop();
    Tensor grad = std::move(pending_grads[node]);
    pending_grads.erase(node);
    if (observe) (*observe)(*node, grad);
    check(static_cast<bool>(node->backward), "backward: the graph through '", node->op,
          "' was already released by an earlier backward; pass keep_graph = true to that one");

    std::vector<bool> needs_grad(node->inputs.size());
    for (size_t i = 0; i < node->inputs.size(); ++i) needs_grad[i] = node->inputs[i].active();
    check_saved_versions(*node);
    const std::vector<Tensor> buffers = leaf_grad_buffers(*node);
    std::vector<Tensor> input_grads;
    {
      const LeafGradsInView in_view(buffers);
      input_grads = node->backward(grad, needs_grad);
    }
    check(input_grads.size() == node->inputs.size(), "backward of '", node->op, "' returned ", input_grads.size(),
          " gradients for ", node->inputs.size(), " inputs");
    if (!keep_graph) {  // frees the saved tensors now, not at the end
      node->backward = nullptr;
      node->saved.clear();
    }

    for (size_t i = 0; i < node->inputs.size(); ++i) {
      const Edge& edge = node->inputs[i];
      const Tensor& input_grad = input_grads[i];
      if (!edge.active() || !input_grad.defined()) continue;
      check(input_grad.shape() == node->input_shapes[i], "backward of '", node->op, "': gradient of shape ",
            input_grad.shape(), " for input ", i, " of shape ", node->input_shapes[i]);
      check(input_grad.dtype() == node->input_dtypes[i], "backward of '", node->op, "': gradient of dtype ",
            dtype_name(input_grad.dtype()), " for input ", i, " of dtype ", dtype_name(node->input_dtypes[i]));
      if (edge.leaf) {
        accumulate_into_leaf(Tensor(edge.leaf), input_grad);
        continue;
      }
      Node* next = edge.node.get();
      auto [slot, first_time] = pending_grads.try_emplace(next, input_grad);
      if (first_time) {
        ready.push(next);
        visited.push_back(edge.node);
      } else {
        slot->second = raw::add(slot->second, input_grad);  // a tensor used twice gets both contributions
      }
    }
  }
}

}  // namespace

void backward(const Tensor& output, const Tensor& grad_output, bool keep_graph) {
  run_backward(output, grad_output, keep_graph, nullptr);
}

void backward_observed(const Tensor& output, const Tensor& grad_output, const NodeGradientObserver& observe) {
  run_backward(output, grad_output, /*keep_graph=*/false, &observe);
}

Tensor leaf_grad_buffer(size_t input) {
  if (!running_leaf_grads || input >= running_leaf_grads->size()) return Tensor();
  return (*running_leaf_grads)[input];
}

void zero_grad(const std::vector<Tensor>& tensors) {
  for (Tensor tensor : tensors) tensor.set_grad(Tensor());
}

}  // namespace tg
