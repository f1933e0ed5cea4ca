// Whether differentiable ops record onto the graph. Per thread: OpenMP workers
// inside kernels never record anything.
#pragma once

namespace tg {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// RAII: nothing is recorded while a NoGradGuard lives (evaluation, optimiser
// steps, generation). Restores the previous mode on exit, so guards nest.
class NoGradGuard {
 public:
  NoGradGuard() : previous_(is_grad_enabled()) { set_grad_enabled(false); }
  ~NoGradGuard() { set_grad_enabled(previous_); }
  NoGradGuard(const NoGradGuard&) = delete;
  NoGradGuard& operator=(const NoGradGuard&) = delete;

 private:
  bool previous_;
};

}  // namespace tg
