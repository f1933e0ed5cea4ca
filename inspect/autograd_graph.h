// The autograd graph of one computation as plain data, for drawing
// (inspect/autograd_graph_page.h): the tape's nodes in creation order, each with
// its forward value and the gradient that reached it, and the leaves (parameters,
// inputs) with their .grad, joined by edges input -> output.
//
// A Node does not keep its output, so a GraphRecorder listens to the tape
// (autograd/tape_listener.h) while the forward runs, then finish() walks the
// tape back from the output and runs backward_observed (autograd/backward.h),
// which hands over the whole gradient reaching each node as backward gets there.
//
//   GraphRecorder recorder;                   // listens on this thread from here
//   Tensor o = tanh(x1 * w1 + x2 * w2 + b);
//   AutogradGraph graph = recorder.finish(o, Tensor(), {{"x1", x1}, {"w1", w1}, ...});
//
// The two graphs the explain page draws are built in autograd_graph_examples.h.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tinygpt/autograd/tape_listener.h"
#include "tinygpt/tensor/tensor.h"

namespace tg::inspect {

// A tensor at a glance: its shape, its first values (all of them when there are
// few: a scalar in full) and its L2 norm.
struct TensorGlance {
  static constexpr size_t kShownValues = 6;
  bool present = false;       // false: nothing to show (a gradient the backward never brought)
  Shape shape;
  int64_t count = 0;          // elements
  std::vector<double> first;  // the first min(count, kShownValues), in row-major order
  double norm = 0;            // sqrt(sum of squares)
};
TensorGlance glance(const Tensor& tensor);

struct GraphNode {
  bool is_leaf = false;
  uint64_t sequence = 0;       // Node::sequence, its place on the tape (an op; 0 for a leaf)
  std::string op;              // the op ("mul", "softmax", ...); a leaf: "leaf"
  std::string label;           // a leaf's name ("w1", "blocks.0.attn.qkv.weight", else "leaf"); an
                               // op's output's name when it was given one ("n"), else empty
  std::vector<size_t> inputs;  // an op's inputs that take a gradient, as indices into
                               // AutogradGraph::nodes, in the op's order (twice for x * x)
  TensorGlance value;          // the forward value: an op's output, a leaf itself
  TensorGlance gradient;       // d(output)/d(this): what reached an op's output, a leaf's .grad
};

struct AutogradGraph {
  std::string title;       // "A neuron: o = tanh(x1*w1 + x2*w2 + b)"
  std::string description;  // a sentence on what was computed and which gradient started the backward
  // The ops in creation order (increasing sequence), each leaf just before the
  // first op that reads it. An input always comes before the ops that read it.
  std::vector<GraphNode> nodes;
};

class GraphRecorder {
 public:
  GraphRecorder();  // listens to the tape of this thread until finish()
  GraphRecorder(const GraphRecorder&) = delete;  // its listener points at it
  GraphRecorder& operator=(const GraphRecorder&) = delete;

  // Stops listening, collects the tape that produced `output` (the nodes
  // reachable from its grad_fn; a leaf ends a path), then runs
  // backward_observed(output, grad_output) and reads each node's gradient and
  // each leaf's .grad. `leaves` names the leaves to show by their names (others
  // go by their tensor's name, or "leaf"); give leaves without a .grad yet, or
  // their .grad shows the sum.
  // An op recorded before the recorder started shows no value. Throws when
  // `output` was not computed by an op that requires grad.
  AutogradGraph finish(const Tensor& output, const Tensor& grad_output,
                       const std::vector<std::pair<std::string, Tensor>>& leaves);

 private:
  std::map<uint64_t, Tensor> outputs_;  // by Node::sequence: each recorded op's output
  std::optional<TapeListener> listener_;
};

}  // namespace tg::inspect
