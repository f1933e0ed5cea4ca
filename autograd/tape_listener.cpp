#include "tinygpt/autograd/tape_listener.h"

#include "tinygpt/tensor/error.h"

namespace tg {

namespace {
thread_local TapeListener* innermost = nullptr;  // the listeners of this thread, a stack linked by outer_
}  // namespace

TapeListener::TapeListener(TapeObserver observe) : observe_(std::move(observe)), outer_(innermost) {
  check(static_cast<bool>(observe_), "TapeListener: the observer is empty");
  innermost = this;
}

TapeListener::~TapeListener() {
  // Unlinked wherever it is in the stack, so that even a listener destroyed out of
  // order (a heap-allocated one) never leaves a dangling link behind.
  for (TapeListener** link = &innermost; *link; link = &(*link)->outer_)
    if (*link == this) {
      *link = outer_;
      return;
    }
}

void TapeListener::notify(const Node& node, const Tensor& output) {
  for (TapeListener* listener = innermost; listener; listener = listener->outer_) listener->observe_(node, output);
}

}  // namespace tg
