// Watching the tape being written. A Node does not keep its output (that would
// be a reference cycle: the output owns its Node), so a tool that wants to show
// each node's forward value (inspect/autograd_graph.h draws the graph) installs
// a TapeListener for the forward it runs: record() (autograd/node.cpp) hands it
// every node it creates, with the node's output, in creation order.
//
//   std::vector<Tensor> outputs;
//   {
//     TapeListener listener([&](const Node& node, const Tensor& output) { outputs.push_back(output.detach()); });
//     Tensor y = tanh(x * w + b);  // the listener sees mul, add, tanh
//   }                              // and nothing after its scope
//
// The rules:
// - Thread-local: a listener sees the nodes recorded on the thread that
//   installed it, never another thread's.
// - Nesting: listeners stack. A node recorded while several are installed on
//   the thread goes to every one of them, innermost first; when the inner one
//   is destroyed the outer one carries on alone.
// - Scoped: a listener hears from its construction to its destruction (and is
//   unlinked even when destroyed out of order); it is neither copied nor moved.
// - The output handed over is the op's output as returned (grad_fn set); valid
//   during the call, so keep a handle (detach() shares the data) to read later.
// With no listener installed record() pays one thread-local load.
#pragma once
#include <functional>

#include "tinygpt/tensor/tensor.h"

namespace tg {

struct Node;

using TapeObserver = std::function<void(const Node& node, const Tensor& output)>;

class TapeListener {
 public:
  explicit TapeListener(TapeObserver observe);
  ~TapeListener();
  TapeListener(const TapeListener&) = delete;
  TapeListener& operator=(const TapeListener&) = delete;

  // record()'s call: hands (node, output) to every listener installed on this thread.
  static void notify(const Node& node, const Tensor& output);

 private:
  TapeObserver observe_;
  TapeListener* outer_;  // the listener installed before this one on this thread, or none
};

}  // namespace tg
