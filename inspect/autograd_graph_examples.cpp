#include "tinygpt/inspect/autograd_graph_examples.h"

#include <vector>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/elementwise_ops.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/autograd/view_ops.h"
#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/walkthrough_forward.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/tensor/factory.h"

namespace tg::inspect {

namespace {

Tensor named_leaf(const std::string& name, double value) {
  Tensor leaf = scalar(value, DType::Float64);
  leaf.set_requires_grad().set_name(name);
  return leaf;
}

}  // namespace

AutogradGraph neuron_graph() {
  GradModeGuard recording(true);
  const Tensor x1 = named_leaf("x1", 2), x2 = named_leaf("x2", 0);  // inputs
  const Tensor w1 = named_leaf("w1", -3), w2 = named_leaf("w2", 1);  // weights
  const Tensor b = named_leaf("b", 6.8813735870195432);             // bias: makes o come out at 1/sqrt(2)
  GraphRecorder recorder;
  Tensor x1w1 = x1 * w1;
  x1w1.set_name("x1*w1");
  Tensor x2w2 = x2 * w2;
  x2w2.set_name("x2*w2");
  Tensor sum = x1w1 + x2w2;
  sum.set_name("x1*w1 + x2*w2");
  Tensor n = sum + b;
  n.set_name("n");
  Tensor o = tanh(n);
  o.set_name("o");
  AutogradGraph graph = recorder.finish(o, Tensor(), {{"x1", x1}, {"x2", x2}, {"w1", w1}, {"w2", w2}, {"b", b}});
  graph.title = "A neuron: o = tanh(x1*w1 + x2*w2 + b)";
  graph.description = "micrograd's example, on 0-d float64 tensors with the engine's own ops (mul, add, tanh). "
                      "The backward starts from do/do = 1.";
  return graph;
}

AutogradGraph block_graph(GPT& model, const tokenizer::TextTokenizer& tokenizer, const std::string& prompt,
                          const std::string& target, int64_t layer) {
  const GPTConfig& config = model.config();
  check(layer >= 0 && layer < config.n_layer, "autograd graph: block ", layer, " does not exist: the model has ",
        config.n_layer, " blocks (0 .. ", config.n_layer - 1, ")");
  std::vector<int64_t> ids = tokenizer.encode(prompt);
  const int64_t prompt_tokens = static_cast<int64_t>(ids.size());
  for (int64_t id : tokenizer.encode(target)) ids.push_back(id);
  const int64_t time = static_cast<int64_t>(ids.size());
  check(time >= 2, "autograd graph: the prompt", target.empty() ? "" : " and target", " make ", time,
        " token(s); the block's graph needs 2 or more, since its loss is each position predicting the next");
  check(time <= config.block_size, "autograd graph: the prompt", target.empty() ? "" : " and target", " make ", time,
        " tokens, more than the model's block_size of ", config.block_size);
  for (int64_t id : ids)
    check(id >= 0 && id < config.vocab_size, "autograd graph: token id ", id, " is outside the model's vocabulary [0, ",
          config.vocab_size, ")");

  GradModeGuard recording(true);
  const ParameterLeaves parameters = parameter_leaves(model, /*requires_grad=*/true);
  WalkthroughOptions options;
  options.layer = layer;
  std::vector<Stage> stages;  // the walk-through's stages, not drawn here
  GraphRecorder recorder;
  TracedForward traced = traced_forward(config, parameters, from_vector(ids, {1, time}), options, tokenizer.kind(), stages);

  // The loss as explain's: position t predicts token t + 1, from the prompt's last
  // token on with a target, from the first without.
  std::vector<int64_t> next(time, -100);  // -100: cross_entropy's ignore_index
  for (int64_t t = target.empty() ? 0 : prompt_tokens - 1; t + 1 < time; ++t) next[t] = ids[t + 1];
  const Tensor loss = nn::cross_entropy(view(traced.logits, {-1, config.vocab_size}), from_vector(next));  // (T, V), (T)
  backward(loss);
  // Down the cuts to the block's output: residual[i] is the stream entering block i.
  for (int64_t cut = config.n_layer; cut > layer + 1; --cut)
    backward(traced.residual[cut].computed, traced.residual[cut].leaf.grad());

  const GraphCut& input = traced.residual[layer], &output = traced.residual[layer + 1];
  std::vector<std::pair<std::string, Tensor>> leaves = {{"x (the stream entering block " + std::to_string(layer) + ")", input.leaf}};
  const std::string prefix = "blocks." + std::to_string(layer) + ".";
  for (const auto& [name, parameter] : parameters)
    if (name.starts_with(prefix)) leaves.emplace_back(name, parameter);
  AutogradGraph graph = recorder.finish(output.computed, output.leaf.grad(), leaves);
  graph.title = "Block " + std::to_string(layer) + " of " + std::to_string(config.n_layer) + " on " +
                std::to_string(time) + " tokens: \"" + prompt + "\"" + (target.empty() ? "" : " + \"" + target + "\"");
  graph.description = "The block's forward as the walk-through composes it (attention written out as its steps: "
                      "scores, mask, softmax, weighted sum), recorded on " + shape_text({1, time, config.n_embd}) +
                      " and differentiated from the next-token loss (" + number(loss.item<double>()) +
                      "): the backward starts from dLoss/d(the block's output) and ends at its parameters and x.";
  return graph;
}

}  // namespace tg::inspect
