// The tape. Every differentiable op applied to inputs that require grad records
// a Node on its output: the op's name, its backward function (holding the
// tensors it saved) and one edge per input saying where that input's gradient
// goes next. The nodes reachable from a loss form the tape, and backward()
// plays it in reverse topological order (autograd/backward.cpp: nodes come
// out of a priority queue in decreasing creation order, `sequence` below).
//
// Ownership: an output owns its Node (grad_fn); a Node owns the Nodes of its
// inputs through its edges. So the graph lives exactly as long as something can
// still backpropagate through it, and memory does not grow across steps.
// Saved tensors must be detached (Tensor::detach) so that no Node owns its own
// output, which would be a reference cycle.
//
// An in-place write (raw::mul_, copy_, fill_, add_, an optimiser's step) into a tensor
// that an op saved would make that op's gradient silently wrong: y = exp(x), then
// mul_(y, 3), then backward gave 3 e^x. So record() takes the tensors the backward
// reads and notes their storages' versions (tensor/storage.h), and backward refuses
// to run a node whose saved tensors were written since, naming the op, as PyTorch does.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tinygpt/tensor/tensor.h"

namespace tg {

// A tensor an op's backward reads, and its storage's version when the op ran.
struct SavedVersion {
  std::shared_ptr<Storage> storage;
  uint64_t version;
  int role;          // the input it shares memory with, kOutput, or kOther
  Shape shape;
  static constexpr int kOutput = -1, kOther = -2;
};

struct Edge {
  std::shared_ptr<Node> node;         // the input's grad_fn, when the input was computed by an op
  std::shared_ptr<TensorImpl> leaf;   // the input itself, when it is a leaf that requires grad
  bool active() const { return node || leaf; }
};

using Grads = std::vector<Tensor>;  // one gradient per input of an op
using Needs = std::vector<bool>;    // per input of an op: does it want a gradient?

// Computes the gradient of each input from the gradient of the output.
// needs_grad[i] says whether input i wants one; return an undefined Tensor for
// the others. Returned gradients may have the input's shape in any layout.
using BackwardFn = std::function<Grads(const Tensor& grad_output, const Needs& needs_grad)>;

struct Node {
  std::string op;              // "matmul", "add", ... (shown in errors and graph dumps)
  std::vector<Edge> inputs;    // one per input of the op, in order
  std::vector<Shape> input_shapes;  // to check what backward returns
  std::vector<DType> input_dtypes;
  BackwardFn backward;         // released after a backward pass unless the graph is kept
  std::vector<SavedVersion> saved;  // checked before backward runs, released with it
  uint64_t sequence;           // creation order: a later op has a larger number

  static int64_t live_count();  // Nodes alive right now (the memory-growth test watches it)
  Node();
  ~Node();
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;
};

// Records `op` on `output` when grad mode is on and any input requires grad, and
// returns output (a fresh handle if it aliased an input). Every differentiable op
// ends with this, naming last the tensors its backward reads (`saved`: undefined
// ones are skipped):
//
//   Tensor y = raw::exp(x);
//   return record("exp", {x}, y, [y = y.detach()](const Tensor& dy, const Needs&) {
//     return Grads{raw::mul(dy, y)};  // d exp(x)/dx = exp(x)
//   }, {y});
Tensor record(const char* op, const std::vector<Tensor>& inputs, Tensor output, BackwardFn backward,
              const std::vector<Tensor>& saved = {});

// Throws, naming the node's op and the tensor, when a tensor it saved has been
// written in place since it was saved (autograd/backward.cpp calls it).
void check_saved_versions(const Node& node);

// During a backward function: the gradient buffer of input `input` when that
// input is a leaf that already has one (a ParameterArena's parameters always
// do), contiguous, of the input's shape and dtype; else an undefined Tensor.
// A backward may add its gradient straight into it (a GEMM with beta = 1: no
// gradient buffer of its own and no pass of adds afterwards) and then return an
// undefined Tensor for that input. autograd/linear_op.cpp does, for weights.
Tensor leaf_grad_buffer(size_t input);

// True when recording is on and some input requires grad (ops can skip saving
// tensors for backward when it is false).
bool any_requires_grad(const std::vector<Tensor>& inputs);

}  // namespace tg
