// activation_checkpoint: the no-grad forward, and the backward that recomputes
// (the idea and its guarantees: autograd/activation_checkpoint.h).
#include "tinygpt/autograd/activation_checkpoint.h"

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/node.h"

namespace tg {

namespace {

struct GeneratorState {
  uint64_t seed = 0, counter = 0;
};

GeneratorState state_of(const Generator& generator) { return {generator.seed(), generator.counter()}; }

// Puts a generator (when there is one) back into an earlier state for its
// lifetime, then restores the state it had when the rewind began.
class GeneratorRewind {
 public:
  GeneratorRewind(Generator* generator, GeneratorState earlier) : generator_(generator) {
    if (!generator_) return;
    current_ = state_of(*generator_);
    generator_->set_state(earlier.seed, earlier.counter);
  }
  ~GeneratorRewind() {
    if (generator_) generator_->set_state(current_.seed, current_.counter);
  }
  GeneratorRewind(const GeneratorRewind&) = delete;
  GeneratorRewind& operator=(const GeneratorRewind&) = delete;

 private:
  Generator* generator_;
  GeneratorState current_;
};

}  // namespace

Tensor activation_checkpoint(CheckpointedFunction function, const Tensor& input, std::shared_ptr<Generator> generator) {
  check(static_cast<bool>(function), "activation_checkpoint: no function given (input of shape ", input.shape(), ")");
  if (!any_requires_grad({input})) return function(input);
  const GeneratorState before_forward = generator ? state_of(*generator) : GeneratorState{};
  Tensor output;
  {
    NoGradGuard no_grad;  // the internals are not recorded: nothing but `input` outlives the call
    output = function(input);
  }
  return record("activation_checkpoint", {input}, output,
                [function = std::move(function), saved_input = input.detach(), generator = std::move(generator),
                 before_forward](const Tensor& grad_output, const Needs&) {
                  // A fresh leaf each time, so a graph kept for a second backward recomputes cleanly.
                  Tensor replay_input = saved_input.detach();
                  replay_input.set_requires_grad();
                  Tensor replay_output;
                  {
                    GradModeGuard recording(true);  // backward() runs under no-grad; record the recompute
                    GeneratorRewind rewind(generator.get(), before_forward);
                    replay_output = function(replay_input);
                  }
                  if (!replay_output.requires_grad()) return Grads{Tensor()};  // output independent of everything
                  backward(replay_output, grad_output);  // parameters' .grad accumulate here
                  return Grads{replay_input.grad()};     // undefined when the output ignores the input
                }, {input});
}

}  // namespace tg
