// Whether differentiable ops record onto the graph. Per thread: OpenMP workers
// inside kernels never record anything.
#pragma once

namespace tg {

bool is_grad_enabled();
void set_grad_enabled(bool enabled);

// RAII: sets the mode for its lifetime and restores the previous one on exit,
// so guards nest. Turning recording back on inside a no-grad scope is what
// activation_checkpoint's recompute does (autograd/activation_checkpoint.h).
class GradModeGuard {
 public:
  explicit GradModeGuard(bool enabled) : previous_(is_grad_enabled()) { set_grad_enabled(enabled); }
  ~GradModeGuard() { set_grad_enabled(previous_); }
  GradModeGuard(const GradModeGuard&) = delete;
  GradModeGuard& operator=(const GradModeGuard&) = delete;

 private:
  bool previous_;
};

// RAII: nothing is recorded while a NoGradGuard lives (evaluation, optimiser
// steps, generation).
class NoGradGuard : public GradModeGuard {
 public:
  NoGradGuard() : GradModeGuard(false) {}
};

}  // namespace tg
