// Reverse-mode differentiation over the recorded tape.
//
// Order: every Node is created after the Nodes of its inputs, so taking nodes
// in decreasing creation order (Node::sequence) is a reverse topological order:
// when a node runs, every consumer has already added its share to its gradient.
// backward.cpp does this with a priority queue, without recursion.
#pragma once
#include <functional>

#include "tinygpt/tensor/tensor.h"

namespace tg {

// Backpropagates from `output` into the .grad of every leaf that requires grad,
// accumulating (+=) into gradients already there. For a non-scalar output pass
// its gradient (same shape). The tape is released afterwards unless
// keep_graph is true; a second backward through a released tape throws.
// Re-entrant: all its state is local, so a node's backward may itself call
// backward() on a graph of its own (activation_checkpoint's recompute does).
void backward(const Tensor& output, const Tensor& grad_output = Tensor(), bool keep_graph = false);

// What reaches each node on the way: the whole gradient of the node's output (a
// non-leaf tensor's gradient, which backward() otherwise never keeps), given
// before the node's backward runs. Valid during the call only: clone to keep.
using NodeGradientObserver = std::function<void(const Node& node, const Tensor& grad)>;

// As backward(), calling `observe` for each node it reaches (the walk-through
// reads dLoss/d(every stage) this way, inspect/walkthrough.cpp).
void backward_observed(const Tensor& output, const Tensor& grad_output, const NodeGradientObserver& observe);

// Sets .grad of each tensor to undefined (the next backward starts from zero).
void zero_grad(const std::vector<Tensor>& tensors);

}  // namespace tg
