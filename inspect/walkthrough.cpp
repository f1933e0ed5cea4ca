// walk_through(): the checks, the tokens, then the traced forward
// (inspect/walkthrough_forward.cpp), and what is read off it: the top-k
// predictions, the loss with its layer-by-layer backward, and the causality
// check against GPT::forward itself.
#include "tinygpt/inspect/walkthrough.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/walkthrough_forward.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/nn/optim/clip.h"
#include "tinygpt/tensor/view.h"

namespace tg::inspect {

namespace {

constexpr int64_t kIgnoredTarget = -100;  // nn::cross_entropy's ignore_index

double gradient_norm(const Tensor& leaf) { return nn::grad_norm({leaf}); }  // 0 without a gradient

void check_options(const GPTConfig& config, const std::string& prompt, const WalkthroughOptions& options) {
  check(!prompt.empty(), "walk_through: the prompt is empty; give at least one token of text");
  check(!options.layer || (*options.layer >= 0 && *options.layer < config.n_layer), "walk_through: layer ",
        options.layer.value_or(0), " does not exist: the model has ", config.n_layer, " blocks (0 .. ",
        config.n_layer - 1, ")");
  check(!options.head || (*options.head >= 0 && *options.head < config.n_head), "walk_through: head ",
        options.head.value_or(0), " does not exist: the model has ", config.n_head, " heads per block (0 .. ",
        config.n_head - 1, ")");
  check(options.top_k >= 1, "walk_through: top_k must be at least 1, got ", options.top_k);
}

Stage tokens_stage(const Walkthrough& walkthrough, const Tensor& ids, const std::string& tokenizer_kind) {
  Stage stage = make_stage("", "tokens", "Tokens", walkthrough.config, tokenizer_kind);
  stage.output_shape = ids.shape();
  stage.tensors.push_back({"ids", shown_tensor(raw::to_dtype(ids, DType::Float32))});
  stage.statistics = statistics_of(stage.tensors[0].value);
  const int64_t total = static_cast<int64_t>(walkthrough.tokens.size());
  stage.notes.push_back(std::to_string(total) + " tokens: " + std::to_string(walkthrough.prompt_tokens) +
                        " from the prompt" +
                        (total > walkthrough.prompt_tokens
                             ? ", " + std::to_string(total - walkthrough.prompt_tokens) + " from the target"
                             : std::string()));
  stage.notes.push_back(std::string(tokenizer_kind == "char" ? "character-level" : "GPT-2 BPE") +
                        " vocabulary of " + std::to_string(walkthrough.config.vocab_size) + " tokens");
  return stage;
}

std::vector<PositionPredictions> predictions_of(const Walkthrough& walkthrough, const Tensor& probabilities,
                                                const tokenizer::TextTokenizer& tokenizer, int64_t top_k) {
  const int64_t time = probabilities.size(1), vocab = probabilities.size(2);
  const std::vector<double> values = probabilities.to_vector<double>();
  const int64_t shown = std::min(top_k, vocab);
  std::vector<PositionPredictions> predictions;
  std::vector<int64_t> order(vocab);
  for (int64_t t = 0; t < time; ++t) {
    const double* row = values.data() + t * vocab;
    std::iota(order.begin(), order.end(), int64_t{0});
    std::partial_sort(order.begin(), order.begin() + shown, order.end(),
                      [&](int64_t a, int64_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
    PositionPredictions position{t, walkthrough.tokens[t].text, {}};
    for (int64_t rank = 0; rank < shown; ++rank)
      position.top.push_back({order[rank], tokenizer.display(order[rank]), row[order[rank]]});
    predictions.push_back(std::move(position));
  }
  return predictions;
}

// The target tokens' loss, then a backward run one layer at a time across the
// cuts, reading the gradient reaching each layer and its parameters' gradient,
// and the gradient reaching each shown stage's output (Stage::gradients).
LossReport loss_report(const Walkthrough& walkthrough, const std::vector<int64_t>& ids, TracedForward& traced,
                       const ParameterLeaves& parameters, std::vector<Stage>& stages) {
  const int64_t time = static_cast<int64_t>(ids.size()), vocab = walkthrough.config.vocab_size;
  // Position t predicts token t + 1: the targets are what follows each position
  // from the prompt's last token on.
  std::vector<int64_t> next(time, kIgnoredTarget);
  for (int64_t t = walkthrough.prompt_tokens - 1; t + 1 < time; ++t) next[t] = ids[t + 1];
  const Tensor loss = nn::cross_entropy(view(traced.logits, {-1, vocab}), from_vector(next));  // (T, V), (T)

  LossReport report;
  report.loss = loss.item<double>();
  report.perplexity = std::exp(report.loss);
  const std::vector<double> probabilities = traced.probabilities.to_vector<double>();
  for (int64_t t = walkthrough.prompt_tokens; t < time; ++t)
    report.targets.push_back({t, ids[t], walkthrough.tokens[t].text, probabilities[(t - 1) * vocab + ids[t]]});

  // The gradient reaching each shown stage's output, read as the backward passes its node.
  std::map<const Node*, Tensor> stage_gradients;
  for (const StageOutput& recorded : traced.stage_outputs)
    if (recorded.output.grad_fn()) stage_gradients.emplace(recorded.output.grad_fn().get(), Tensor());
  const NodeGradientObserver keep = [&](const Node& node, const Tensor& grad) {
    if (const auto found = stage_gradients.find(&node); found != stage_gradients.end())
      found->second = raw::clone(grad);
  };
  backward_observed(loss, Tensor(), keep);
  for (auto cut = traced.residual.rbegin(); cut != traced.residual.rend(); ++cut)
    backward_observed(cut->computed, cut->leaf.grad(), keep);
  backward_observed(traced.token_rows.computed, traced.token_rows.leaf.grad(), keep);
  for (const GraphCut& cut : traced.residual) {  // (1, T, C) each
    const std::vector<double> gradient = cut.leaf.grad().to_vector<double>();
    const int64_t channels = cut.leaf.size(2);
    std::vector<double>& norms = report.stream_gradient_norms.emplace_back();
    for (int64_t t = 0; t < time; ++t) {
      double squares = 0;
      for (int64_t c = 0; c < channels; ++c) squares += gradient[t * channels + c] * gradient[t * channels + c];
      norms.push_back(std::sqrt(squares));
    }
  }
  for (const StageOutput& recorded : traced.stage_outputs) {
    const Tensor grad =
        recorded.output.grad_fn() ? stage_gradients.at(recorded.output.grad_fn().get()) : recorded.output.grad();
    if (!grad.defined()) continue;  // the loss does not reach it
    Stage& stage = stages[recorded.stage];
    if (recorded.heads.empty()) {
      stage.gradients.push_back({"output", shown_tensor(grad)});
      continue;
    }
    for (size_t shown = 0; shown < recorded.heads.size(); ++shown)  // (1, heads, T, X) -> (T, X)
      stage.gradients.push_back(
          {stage.tensors[shown].label, shown_tensor(raw::select(raw::select(grad, 0, 0), 0, recorded.heads[shown]))});
  }

  auto parameter_norm = [&](auto belongs) {
    std::vector<Tensor> chosen;
    for (const auto& [name, leaf] : parameters)
      if (belongs(name)) chosen.push_back(leaf);
    return nn::grad_norm(chosen);
  };
  const int64_t layers = walkthrough.config.n_layer;
  report.gradients.push_back({walkthrough.config.tie_embeddings ? "ln_f" : "ln_f + lm_head",
                              gradient_norm(traced.residual[layers].leaf), parameter_norm([](const std::string& name) {
                                return name.starts_with("ln_f.") || name.starts_with("lm_head.");
                              })});
  for (int64_t layer = layers - 1; layer >= 0; --layer) {
    const std::string prefix = "blocks." + std::to_string(layer) + ".";
    report.gradients.push_back({"block " + std::to_string(layer), gradient_norm(traced.residual[layer].leaf),
                                parameter_norm([&](const std::string& name) { return name.starts_with(prefix); })});
  }
  report.gradients.push_back({"embeddings", gradient_norm(traced.token_rows.leaf),
                              parameter_norm([](const std::string& name) {
                                return name.starts_with("wte.") || name.starts_with("wpe.");
                              })});
  return report;
}

// Gradient x input for the top next token at `position` (Attribution), from a
// forward of its own whose backward reaches only the stream entering block 0.
Attribution attribution_of(const GPT& model, const Tensor& ids, const Walkthrough& walkthrough, int64_t position,
                           const std::string& tokenizer_kind) {
  const Prediction& top = walkthrough.predictions.at(position).top.at(0);
  WalkthroughOptions quiet;
  quiet.layer = 0;  // the stages go to a throwaway list: as few as can be
  std::vector<Stage> unused;
  GradModeGuard grad_mode(true);
  TracedForward traced = traced_forward(walkthrough.config, parameter_leaves(model, false), ids, quiet, tokenizer_kind,
                                        unused, /*differentiate_stream=*/true);
  const int64_t vocab = walkthrough.config.vocab_size;
  std::vector<float> seed(static_cast<size_t>(traced.logits.numel()), 0.0f);  // (1, T, V): one at (position, id)
  seed[static_cast<size_t>(position * vocab + top.id)] = 1.0f;
  backward(traced.logits, from_vector(seed, traced.logits.shape()));
  for (size_t cut = traced.residual.size() - 1; cut >= 1; --cut)  // across the layer cuts, down to block 0's input
    backward(traced.residual[cut].computed, traced.residual[cut].leaf.grad());

  Attribution attribution{position, top.id, top.text, traced.logits.to_vector<double>()[position * vocab + top.id], {}};
  const Tensor& stream = traced.residual.front().leaf;  // (1, T, C)
  const std::vector<double> x = stream.to_vector<double>(), gradient = stream.grad().to_vector<double>();
  const int64_t channels = stream.size(2);
  for (int64_t s = 0; s <= position; ++s) {
    double score = 0;
    for (int64_t c = 0; c < channels; ++c) score += x[s * channels + c] * gradient[s * channels + c];
    attribution.scores.push_back(score);
  }
  return attribution;
}

double max_abs_difference(const std::vector<double>& a, const std::vector<double>& b, size_t begin, size_t end) {
  double largest = 0;
  for (size_t i = begin; i < end; ++i) largest = std::max(largest, std::abs(a[i] - b[i]));
  return largest;
}

// GPT::forward on the ids, and again with the last token replaced: the logits of
// the earlier positions must not move. Also measures forward_match.
void check_against_model(GPT& model, const tokenizer::TextTokenizer& tokenizer, const std::vector<int64_t>& ids,
                         const Tensor& traced_logits, Walkthrough& walkthrough) {
  nn::EvalModeGuard eval(model);
  NoGradGuard no_grad;
  const int64_t time = static_cast<int64_t>(ids.size()), vocab = walkthrough.config.vocab_size;
  const std::vector<double> logits = model.forward(from_vector(ids, {1, time})).to_vector<double>();
  const std::vector<double> traced = traced_logits.detach().to_vector<double>();
  walkthrough.forward_match = max_abs_difference(logits, traced, 0, logits.size());

  std::vector<int64_t> changed_ids = ids;
  changed_ids.back() = (ids.back() + 1) % vocab;
  const std::vector<double> changed = model.forward(from_vector(changed_ids, {1, time})).to_vector<double>();
  CausalityCheck& causality = walkthrough.causality;
  causality.changed_position = time - 1;
  causality.original = tokenizer.display(ids.back());
  causality.replacement = tokenizer.display(changed_ids.back());
  const size_t last_row = static_cast<size_t>((time - 1) * vocab);
  causality.max_change_earlier = max_abs_difference(logits, changed, 0, last_row);
  causality.max_change_last = max_abs_difference(logits, changed, last_row, logits.size());
}

}  // namespace

Statistics statistics_of(const Tensor& values) {
  // Over the finite values only: a masked score (-inf) is a marker, not a number.
  const std::vector<double> all = values.detach().to_vector<double>();
  double total = 0, total_squares = 0, low = INFINITY, high = -INFINITY;
  int64_t count = 0;
  for (double value : all) {
    if (!std::isfinite(value)) continue;
    total += value;
    low = std::min(low, value);
    high = std::max(high, value);
    ++count;
  }
  if (count == 0) return {};
  const double mean = total / static_cast<double>(count);
  for (double value : all)
    if (std::isfinite(value)) total_squares += (value - mean) * (value - mean);
  return {mean, std::sqrt(total_squares / static_cast<double>(count)), low, high};
}

Walkthrough walk_through(GPT& model, const tokenizer::TextTokenizer& tokenizer, const std::string& prompt,
                         const WalkthroughOptions& options) {
  Walkthrough walkthrough;
  walkthrough.model_description = options.model_description;
  walkthrough.config = model.config();
  walkthrough.prompt = prompt;
  walkthrough.target = options.target;
  const GPTConfig& config = walkthrough.config;
  check_options(config, prompt, options);

  std::vector<int64_t> ids = tokenizer.encode(prompt);
  walkthrough.prompt_tokens = static_cast<int64_t>(ids.size());
  if (!options.target.empty()) {
    const std::vector<int64_t> target_ids = tokenizer.encode(options.target);
    ids.insert(ids.end(), target_ids.begin(), target_ids.end());
  }
  const int64_t time = static_cast<int64_t>(ids.size());
  check(time <= config.block_size, "walk_through: the prompt", options.target.empty() ? " makes " : " and target make ",
        time, " tokens, more than the model's block_size of ", config.block_size);
  check(!options.attribute_position || (*options.attribute_position >= 0 && *options.attribute_position < time),
        "walk_through: attribute_position ", options.attribute_position.value_or(0), " is not a position of the ", time,
        " tokens (0 .. ", time - 1, ")");
  for (int64_t t = 0; t < time; ++t) {
    check(ids[t] >= 0 && ids[t] < config.vocab_size, "walk_through: token id ", ids[t], " at position ", t,
          " is outside the model's vocabulary [0, ", config.vocab_size, ")");
    walkthrough.tokens.push_back({t, ids[t], tokenizer.display(ids[t])});
  }

  for (int64_t id = 0; id < std::min(tokenizer.vocab_size(), config.vocab_size); ++id)
    walkthrough.vocabulary.push_back(tokenizer.display(id));

  const std::string tokenizer_kind = tokenizer.kind();
  const Tensor id_tensor = from_vector(ids, {1, time});  // (1, T)
  walkthrough.stages.push_back(tokens_stage(walkthrough, id_tensor, tokenizer_kind));

  const bool with_loss = !options.target.empty();
  GradModeGuard grad_mode(with_loss);
  const ParameterLeaves parameters = parameter_leaves(model, with_loss);
  TracedForward traced = traced_forward(config, parameters, id_tensor, options, tokenizer_kind, walkthrough.stages);
  walkthrough.predictions = predictions_of(walkthrough, traced.probabilities, tokenizer, options.top_k);
  if (with_loss) walkthrough.loss = loss_report(walkthrough, ids, traced, parameters, walkthrough.stages);
  walkthrough.attribution = attribution_of(model, id_tensor, walkthrough,
                                           options.attribute_position.value_or(walkthrough.prompt_tokens - 1),
                                           tokenizer_kind);
  check_against_model(model, tokenizer, ids, traced.logits, walkthrough);
  return walkthrough;
}

}  // namespace tg::inspect
