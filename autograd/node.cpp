#include "tinygpt/autograd/node.h"

#include <atomic>
#include <sstream>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/tape_listener.h"

namespace tg {

namespace {
std::atomic<int64_t> live_nodes{0};
std::atomic<uint64_t> next_sequence{0};
}  // namespace

Node::Node() : sequence(next_sequence++) { ++live_nodes; }
Node::~Node() { --live_nodes; }
int64_t Node::live_count() { return live_nodes.load(); }

bool any_requires_grad(const std::vector<Tensor>& inputs) {
  if (!is_grad_enabled()) return false;
  for (const Tensor& input : inputs)
    if (input.defined() && input.requires_grad()) return true;
  return false;
}

namespace {

// Which of the op's tensors a saved one shares its memory with, for the error's words.
int role_of(const Tensor& saved, const std::vector<Tensor>& inputs, const Tensor& output) {
  for (size_t i = 0; i < inputs.size(); ++i)
    if (inputs[i].defined() && saved.storage() == inputs[i].storage()) return static_cast<int>(i);
  return saved.storage() == output.storage() ? SavedVersion::kOutput : SavedVersion::kOther;
}

std::string describe(const SavedVersion& saved) {
  std::ostringstream words;
  if (saved.role == SavedVersion::kOutput) words << "its output";
  else if (saved.role == SavedVersion::kOther) words << "a tensor it saved";
  else words << "its input " << saved.role;
  words << " of shape " << shape_str(saved.shape);
  return words.str();
}

}  // namespace

void check_saved_versions(const Node& node) {
  for (const SavedVersion& saved : node.saved) {
    const uint64_t now = saved.storage->version();
    // An if, not check(): check's arguments, describe()'s string among them, would be built for
    // every saved tensor of every node of every backward.
    if (now != saved.version)
      fail("backward of '", node.op, "': ", describe(saved), ", which '", node.op, "' saved for its gradient, was "
           "changed in place after it ran (version ", saved.version, ", now ", now, "), so the gradient would be "
           "wrong; change a clone instead, or change it after backward");
  }
}

Tensor record(const char* op, const std::vector<Tensor>& inputs, Tensor output, BackwardFn backward,
              const std::vector<Tensor>& saved) {
  if (!any_requires_grad(inputs)) return output;
  // A raw op may hand back one of its inputs unchanged (contiguous of a
  // contiguous tensor); never write a grad_fn onto an input.
  for (const Tensor& input : inputs)
    if (input.defined() && output.is_same(input)) output = output.detach();
  check(output.is_leaf() && !output.requires_grad(), op, ": output already belongs to a graph");

  auto node = std::make_shared<Node>();
  node->op = op;
  node->backward = std::move(backward);
  for (const Tensor& tensor : saved)
    if (tensor.defined())
      node->saved.push_back({tensor.storage(), tensor.storage()->version(), role_of(tensor, inputs, output), tensor.shape()});
  for (const Tensor& input : inputs) {
    Edge edge;
    if (input.defined() && input.requires_grad()) {
      if (input.grad_fn()) edge.node = input.grad_fn();
      else edge.leaf = input.impl_ptr();
    }
    node->inputs.push_back(std::move(edge));
    node->input_shapes.push_back(input.defined() ? input.shape() : Shape{});
    node->input_dtypes.push_back(input.defined() ? input.dtype() : DType::Float32);
  }
  const Node& recorded = *node;
  output.attach_grad_fn(std::move(node));
  TapeListener::notify(recorded, output);
  return output;
}

}  // namespace tg
