// TapeListener (autograd/tape_listener.h): every node record() creates, with its
// output, in creation order; nothing outside its scope; stacked listeners both
// hear; another thread's nodes never reach it.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tinygpt/autograd/node.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/autograd/tape_listener.h"

using namespace tg;

namespace {

struct Heard {
  std::string op;
  uint64_t sequence;
  Tensor output;
};

TapeObserver keep_in(std::vector<Heard>& heard) {
  return [&heard](const Node& node, const Tensor& output) { heard.push_back({node.op, node.sequence, output}); };
}

Tensor leaf(double value) {
  Tensor x = scalar(value);
  x.set_requires_grad();
  return x;
}

}  // namespace

TEST_CASE("TapeListener: every node in creation order, with its output, and none outside its scope") {
  const Tensor x = leaf(2), w = leaf(-3), b = leaf(1);
  (void)(x * w);  // before the listener: not heard
  std::vector<Heard> heard;
  Tensor y;
  {
    TapeListener listener(keep_in(heard));
    y = tanh(x * w + b);
  }
  (void)(y * x);  // after it: not heard
  REQUIRE(heard.size() == 3);
  CHECK(heard[0].op == "mul");
  CHECK(heard[1].op == "add");
  CHECK(heard[2].op == "tanh");
  CHECK(heard[0].sequence < heard[1].sequence);
  CHECK(heard[1].sequence < heard[2].sequence);
  CHECK(heard[0].output.item<float>() == -6.0f);
  CHECK(heard[1].output.item<float>() == -5.0f);
  CHECK(heard[2].output.is_same(y));  // the output as the op returned it, its node attached
  CHECK(heard[2].output.grad_fn().get() == y.grad_fn().get());
  CHECK(heard[2].output.grad_fn()->sequence == heard[2].sequence);
}

TEST_CASE("TapeListener: an op that records nothing is not heard") {
  const Tensor x = scalar(2.0), constant = scalar(3.0);  // no input requires grad
  std::vector<Heard> heard;
  TapeListener listener(keep_in(heard));
  (void)(x * constant);
  {
    NoGradGuard no_grad;
    (void)(leaf(1) * constant);
  }
  CHECK(heard.empty());
}

TEST_CASE("TapeListener: stacked listeners both hear, innermost first; the outer goes on alone") {
  const Tensor x = leaf(1);
  std::vector<std::string> order;
  TapeListener outer([&](const Node& node, const Tensor&) { order.push_back("outer " + node.op); });
  (void)exp(x);
  {
    TapeListener inner([&](const Node& node, const Tensor&) { order.push_back("inner " + node.op); });
    (void)neg(x);
  }
  (void)tanh(x);
  CHECK(order == std::vector<std::string>{"outer exp", "inner neg", "outer neg", "outer tanh"});
}

TEST_CASE("TapeListener: destroyed out of order, the other one still hears and nothing dangles") {
  const Tensor x = leaf(1);
  std::vector<Heard> first_heard, second_heard;
  auto first = std::make_unique<TapeListener>(keep_in(first_heard));
  TapeListener second(keep_in(second_heard));
  first.reset();  // not the innermost
  (void)exp(x);
  CHECK(first_heard.empty());
  CHECK(second_heard.size() == 1);
}

TEST_CASE("TapeListener: thread-local: another thread's nodes are not heard, and its own listener hears only them") {
  const Tensor x = leaf(1);
  std::vector<Heard> here, there;
  TapeListener listener(keep_in(here));
  std::thread other([&] {
    const Tensor z = leaf(3);
    (void)exp(z);  // before the thread's listener: heard by no one
    TapeListener own(keep_in(there));
    (void)neg(z);
  });
  other.join();
  (void)tanh(x);
  REQUIRE(here.size() == 1);
  CHECK(here[0].op == "tanh");
  REQUIRE(there.size() == 1);
  CHECK(there[0].op == "neg");
}

TEST_CASE("TapeListener: an empty observer is refused") {
  CHECK_THROWS_WITH_AS(TapeListener{TapeObserver{}}, doctest::Contains("TapeListener: the observer is empty"), Error);
}
