#include "tinygpt/inspect/walkthrough_forward.h"

#include <algorithm>
#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/stage_descriptions.h"
#include "tinygpt/nn/attention.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/gelu.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/tensor/cpu/rope_kernels.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/positional.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/softmax.h"
#include "tinygpt/tensor/view.h"

namespace tg::inspect {

namespace {

using Shapes = std::vector<std::vector<int64_t>>;

// The values of x (..., D) as rows of D, in double.
std::vector<std::vector<double>> rows_of(const Tensor& x) {
  const std::vector<double> values = x.detach().to_vector<double>();
  const size_t width = static_cast<size_t>(x.size(-1));
  std::vector<std::vector<double>> rows;
  for (size_t start = 0; start < values.size(); start += width)
    rows.emplace_back(values.begin() + static_cast<std::ptrdiff_t>(start),
                      values.begin() + static_cast<std::ptrdiff_t>(start + width));
  return rows;
}

double mean_of(const std::vector<double>& values) {
  double total = 0;
  for (double value : values) total += value;
  return total / static_cast<double>(values.size());
}

double variance_of(const std::vector<double>& values) {  // population, as LayerNorm's
  const double mean = mean_of(values);
  double total = 0;
  for (double value : values) total += (value - mean) * (value - mean);
  return total / static_cast<double>(values.size());
}

double norm_of(const std::vector<double>& values) {
  double total = 0;
  for (double value : values) total += value * value;
  return std::sqrt(total);
}

// "row means in [a, b], row variances in [c, d]" of x (..., C).
std::string row_moments(const Tensor& x) {
  double low_mean = INFINITY, high_mean = -INFINITY, low_var = INFINITY, high_var = -INFINITY;
  for (const std::vector<double>& row : rows_of(x)) {
    const double mean = mean_of(row), variance = variance_of(row);
    low_mean = std::min(low_mean, mean);
    high_mean = std::max(high_mean, mean);
    low_var = std::min(low_var, variance);
    high_var = std::max(high_var, variance);
  }
  return "row means in [" + number(low_mean) + ", " + number(high_mean) + "], row variances in [" + number(low_var) +
         ", " + number(high_var) + "]";
}

double mean_row_norm(const Tensor& x) {
  double total = 0;
  const auto rows = rows_of(x);
  for (const std::vector<double>& row : rows) total += norm_of(row);
  return total / static_cast<double>(rows.size());
}

// Appends the stages the options keep; the others still run, unrecorded.
class StageLog {
 public:
  StageLog(const GPTConfig& config, const WalkthroughOptions& options, const std::string& tokenizer_kind,
           std::vector<Stage>& stages)
      : config_(config), options_(options), tokenizer_kind_(tokenizer_kind), stages_(stages) {}

  // The stages that follow belong to `group`, with ids prefixed by `id_prefix`.
  void enter(const std::string& group, const std::string& id_prefix, bool shown) {
    group_ = group;
    id_prefix_ = id_prefix;
    shown_ = shown;
  }
  void enter_block(int64_t layer) {
    enter("Block " + std::to_string(layer), "block" + std::to_string(layer) + ".",
          !options_.layer || *options_.layer == layer);
  }

  // A stage whose tensors[0] is its output; null when not shown.
  Stage* add_values(const std::string& kind, const Shapes& inputs, const Tensor& output,
                    std::vector<ShownTensor> extra_views = {}) {
    Stage* stage = add(kind, inputs, output, StageView::Values);
    if (!stage) return nullptr;
    stage->tensors.push_back({"output", shown_tensor(output)});
    for (ShownTensor& view : extra_views) stage->tensors.push_back(std::move(view));
    return stage;
  }

  // A stage whose output (1, NH, T, X) is shown as one (T, X) tensor per shown head.
  Stage* add_per_head(const std::string& kind, const Shapes& inputs, const Tensor& output, StageView view) {
    Stage* stage = add(kind, inputs, output, view);
    if (!stage) return nullptr;
    for (int64_t head = 0; head < output.size(1); ++head)
      if (!options_.head || *options_.head == head)
        stage->tensors.push_back({"head " + std::to_string(head), shown_tensor(raw::select(raw::select(output, 0, 0), 0, head))});
    return stage;
  }

 private:
  Stage* add(const std::string& kind, const Shapes& inputs, const Tensor& output, StageView view) {
    if (!shown_) return nullptr;
    Stage stage = make_stage(id_prefix_, kind, group_, config_, tokenizer_kind_);
    stage.input_shapes = inputs;
    stage.output_shape = output.shape();
    stage.view = view;
    stage.statistics = statistics_of(output.detach());
    stages_.push_back(std::move(stage));
    return &stages_.back();
  }

  const GPTConfig& config_;
  const WalkthroughOptions& options_;
  const std::string& tokenizer_kind_;
  std::vector<Stage>& stages_;
  std::string group_, id_prefix_;
  bool shown_ = true;
};

// One block's parameters, by their name inside the block ("attn.qkv.weight").
class BlockParameters {
 public:
  BlockParameters(const ParameterLeaves& parameters, int64_t layer)
      : parameters_(parameters), prefix_("blocks." + std::to_string(layer) + ".") {}
  // Undefined when the model has no such parameter (a bias with bias = false).
  Tensor operator[](const std::string& name) const {
    const auto found = parameters_.find(prefix_ + name);
    return found == parameters_.end() ? Tensor() : found->second;
  }

 private:
  const ParameterLeaves& parameters_;
  std::string prefix_;
};

// The shapes a Linear reads: x, weight (out, in) and, when there is one, bias (out).
Shapes linear_inputs(const Tensor& x, int64_t out, int64_t in, const GPTConfig& config) {
  Shapes shapes = {x.shape(), {out, in}};
  if (config.bias == nn::BiasMode::All) shapes.push_back({out});
  return shapes;
}

// As nn::LayerNorm::forward (no bias parameter: a zero constant), shown with its
// input's and its normalised values' moments.
Tensor traced_layer_norm(const std::string& kind, const Tensor& x, const Tensor& weight, const Tensor& bias,
                         const GPTConfig& config, StageLog& log) {
  const Tensor zero_bias = bias.defined() ? bias : zeros({config.n_embd}, x.dtype());
  const Tensor y = nn::layer_norm(x, weight, zero_bias, config.norm_eps);  // (1, T, C)
  const Tensor normalised = nn::layer_norm(x.detach(), ones({config.n_embd}, x.dtype()), zeros({config.n_embd}, x.dtype()),
                                           config.norm_eps);
  if (Stage* stage = log.add_values(kind, {x.shape(), weight.shape(), zero_bias.shape()}, y,
                                    {{"normalised (before weight and bias)", shown_tensor(normalised)},
                                     {"input", shown_tensor(x)}})) {
    stage->notes.push_back("input: " + row_moments(x));
    stage->notes.push_back("normalised: " + row_moments(normalised));
  }
  return y;
}

// normed (1, T, C) -> the attention branch's output (1, T, C), as
// nn::CausalSelfAttention, with the mask (T, T) built: true above the diagonal,
// where key j comes after query i.
Tensor traced_attention(const Tensor& normed, const BlockParameters& parameters, const GPTConfig& config,
                        StageLog& log) {
  const int64_t time = normed.size(1), channels = config.n_embd, head_size = channels / config.n_head;
  const Tensor qkv = nn::linear(normed, parameters["attn.qkv.weight"], parameters["attn.qkv.bias"]);  // (1, T, 3C)
  const auto [q, k, v] = nn::split_heads(qkv, config.transformer_options(qkv.dtype()), 0);  // (1, NH, T, HS) each
  const bool rope = config.positional == PositionalEncoding::Rope;
  const Shapes projection_inputs = linear_inputs(normed, channels, channels, config);  // a third of qkv each
  for (const auto& [kind, heads_tensor] : {std::pair{"q", q}, std::pair{"k", k}, std::pair{"v", v}}) {
    Stage* stage = log.add_per_head(kind, projection_inputs, heads_tensor, StageView::Values);
    if (stage && rope && std::string(kind) != "v")
      stage->notes.push_back("rotated by RoPE (nn/functional/rope.cpp): position t turns channel pair i by t * theta_i");
  }

  const double scale = 1.0 / std::sqrt(static_cast<double>(head_size));
  const Tensor scores = matmul(q, transpose(k, -2, -1)) * scale;  // (1, NH, T, T)
  if (Stage* stage = log.add_per_head("scores", {q.shape(), k.shape()}, scores, StageView::Attention))
    stage->notes.push_back("scaled by 1/sqrt(HS) = 1/sqrt(" + std::to_string(head_size) + ") = " + number(scale));
  const Tensor masked = masked_fill(scores, nn::causal_mask(time, time), -INFINITY);  // (1, NH, T, T)
  if (Stage* stage = log.add_per_head("mask", {scores.shape(), {time, time}}, masked, StageView::Attention))
    stage->notes.push_back("-inf at the " + std::to_string(time * (time - 1) / 2) + " entries above the diagonal (of " +
                           std::to_string(time * time) + "), in every head");
  const Tensor weights = softmax(masked, -1);  // (1, NH, T, T)
  if (Stage* stage = log.add_per_head("weights", {masked.shape()}, weights, StageView::Attention)) {
    double deviation = 0;
    for (const std::vector<double>& row : rows_of(weights))
      deviation = std::max(deviation, std::abs(mean_of(row) * static_cast<double>(row.size()) - 1.0));
    stage->notes.push_back("every row sums to 1 (largest deviation " + number(deviation) +
                           "); entries above the diagonal are exactly 0");
  }
  const Tensor attended = matmul(weights, v);  // (1, NH, T, HS)
  log.add_per_head("attend", {weights.shape(), v.shape()}, attended, StageView::Values);
  const Tensor merged = reshape(permute(attended, {0, 2, 1, 3}), {1, time, channels});  // (1, T, C)
  log.add_values("concat", {attended.shape()}, merged);
  const Tensor projected = nn::linear(merged, parameters["attn.c_proj.weight"], parameters["attn.c_proj.bias"]);
  log.add_values("c_proj", linear_inputs(merged, channels, channels, config), projected);
  return projected;
}

// x + branch, shown with the sizes of the stream and of what was added.
Tensor traced_residual(const std::string& kind, const Tensor& x, const Tensor& branch, StageLog& log) {
  const Tensor sum = add(x, branch);  // (1, T, C)
  if (Stage* stage = log.add_values(kind, {x.shape(), branch.shape()}, sum))
    stage->notes.push_back("mean norm per position: stream before " + number(mean_row_norm(x)) + ", branch added " +
                           number(mean_row_norm(branch)) + ", stream after " + number(mean_row_norm(sum)));
  return sum;
}

// x (1, T, C) -> the MLP branch's output (1, T, C), as nn::MLP.
Tensor traced_mlp(const Tensor& normed, const BlockParameters& parameters, const GPTConfig& config, StageLog& log) {
  const int64_t channels = config.n_embd, hidden = 4 * config.n_embd;
  const Tensor expanded = nn::linear(normed, parameters["mlp.c_fc.weight"], parameters["mlp.c_fc.bias"]);  // (1, T, 4C)
  log.add_values("c_fc", linear_inputs(normed, hidden, channels, config), expanded);
  const Tensor activated = nn::gelu(expanded, config.gelu);  // (1, T, 4C)
  if (Stage* stage = log.add_values("gelu", {expanded.shape()}, activated, {{"input", shown_tensor(expanded)}})) {
    const std::vector<double> inputs = expanded.detach().to_vector<double>();
    const auto negative = std::count_if(inputs.begin(), inputs.end(), [](double value) { return value < 0; });
    stage->notes.push_back(number(100.0 * static_cast<double>(negative) / static_cast<double>(inputs.size())) +
                           "% of the inputs are negative: GELU squeezes them into (-0.17, 0]");
  }
  const Tensor contracted = nn::linear(activated, parameters["mlp.c_proj.weight"], parameters["mlp.c_proj.bias"]);
  log.add_values("c_proj_mlp", linear_inputs(activated, channels, hidden, config), contracted);
  return contracted;
}

// x (1, T, C) -> (1, T, C), as nn::Block.
Tensor traced_block(const Tensor& x, const BlockParameters& parameters, const GPTConfig& config, StageLog& log) {
  const Tensor normed_1 = traced_layer_norm("ln_1", x, parameters["ln_1.weight"], parameters["ln_1.bias"], config, log);
  const Tensor attended = traced_residual("residual_1", x, traced_attention(normed_1, parameters, config, log), log);
  const Tensor normed_2 =
      traced_layer_norm("ln_2", attended, parameters["ln_2.weight"], parameters["ln_2.bias"], config, log);
  return traced_residual("residual_2", attended, traced_mlp(normed_2, parameters, config, log), log);
}

// The rotation angles t * base^(-2i/HS), (T, HS/2), nn::rope's own.
Tensor rope_angles(int64_t time, int64_t head_size, double base) {
  const int64_t pairs = head_size / 2;
  std::vector<double> angles(time * pairs);
  for (int64_t t = 0; t < time; ++t)
    for (int64_t i = 0; i < pairs; ++i) angles[t * pairs + i] = cpu::rope_angle(t, i, head_size, base);
  return from_vector(angles, {time, pairs});
}

// ids (1, T) -> the stream entering block 0 (1, T, C), as GPT::embed.
Tensor traced_embedding(const GPTConfig& config, const ParameterLeaves& parameters, const Tensor& ids,
                        StageLog& log, TracedForward& traced) {
  const Tensor& table = parameters.at("wte.weight");  // (V, C)
  const int64_t time = ids.size(1), channels = config.n_embd;
  log.enter("Embeddings", "", true);
  traced.token_rows.computed = embedding(table, ids);  // (1, T, C)
  traced.token_rows.leaf = traced.token_rows.computed.detach().set_requires_grad(table.requires_grad());
  Tensor x = traced.token_rows.leaf;
  if (config.scale_embeddings) x = x * std::sqrt(static_cast<double>(channels));
  log.add_values("embed.tokens", {ids.shape(), table.shape()}, x);

  if (config.positional == PositionalEncoding::Rope) {
    const int64_t head_size = channels / config.n_head;
    const Tensor angles = rope_angles(time, head_size, config.rope_base);  // (T, HS/2)
    if (Stage* stage = log.add_values("embed.rope", {{time}}, angles))
      stage->notes.push_back("pair i turns by theta_i = " + number(config.rope_base) + "^(-2i/" +
                             std::to_string(head_size) + ") radians per position: from 1 (i = 0) down to " +
                             number(std::pow(config.rope_base, -2.0 * static_cast<double>(head_size / 2 - 1) /
                                                                   static_cast<double>(head_size))));
    return x;
  }
  // The rows of the (block_size, C) table in use; the sinusoidal table is only computed for those.
  const Tensor used_positions = config.positional == PositionalEncoding::Learned
                                    ? narrow(parameters.at("wpe.weight"), 0, 0, time)
                                    : nn::sinusoidal_table(time, channels, table.dtype());  // (T, C)
  log.add_values("embed.positions", {Shape{config.block_size, channels}}, used_positions);
  const Tensor sum = add(x, used_positions);  // (1, T, C) + (T, C)
  log.add_values("embed.sum", {x.shape(), used_positions.shape()}, sum);
  return sum;
}

GraphCut cut(const Tensor& computed) {
  return {computed, computed.detach().set_requires_grad(computed.requires_grad())};
}

}  // namespace

Tensor shown_tensor(const Tensor& x) { return raw::clone(raw::to_dtype(x.detach(), DType::Float32)); }

Stage make_stage(const std::string& id_prefix, const std::string& kind, const std::string& group,
                 const GPTConfig& config, const std::string& tokenizer_kind) {
  const StageDescription description = describe_stage(kind, config, tokenizer_kind);
  Stage stage;
  stage.id = id_prefix + kind;
  stage.group = group;
  stage.title = description.title;
  stage.formula = description.formula;
  stage.explanation = description.explanation;
  stage.implementation = description.implementation;
  return stage;
}

ParameterLeaves parameter_leaves(const GPT& model, bool requires_grad) {
  ParameterLeaves leaves;
  // A quantized model's weights widened back to float32: the numbers it computes with.
  for (const auto& [name, parameter] : nn::dequantized_parameters(model))
    leaves.emplace(name, parameter.detach().set_requires_grad(requires_grad));
  return leaves;
}

TracedForward traced_forward(const GPTConfig& config, const ParameterLeaves& parameters, const Tensor& ids,
                             const WalkthroughOptions& options, const std::string& tokenizer_kind,
                             std::vector<Stage>& stages) {
  StageLog log(config, options, tokenizer_kind, stages);
  TracedForward traced;
  traced.residual.push_back(cut(traced_embedding(config, parameters, ids, log, traced)));
  for (int64_t layer = 0; layer < config.n_layer; ++layer) {
    log.enter_block(layer);
    const Tensor output = traced_block(traced.residual.back().leaf, BlockParameters(parameters, layer), config, log);
    traced.residual.push_back(cut(output));
  }

  log.enter("Output", "", true);
  const Tensor& x = traced.residual.back().leaf;  // (1, T, C)
  const auto bias = parameters.find("ln_f.bias");
  const Tensor normed = traced_layer_norm("ln_f", x, parameters.at("ln_f.weight"),
                                          bias == parameters.end() ? Tensor() : bias->second, config, log);
  const auto head = parameters.find("lm_head.weight");
  const Tensor& head_weight = head == parameters.end() ? parameters.at("wte.weight") : head->second;  // (V, C)
  traced.logits = nn::linear(normed, head_weight, Tensor());  // (1, T, C) -> (1, T, V)
  log.add_values("logits", {normed.shape(), head_weight.shape()}, traced.logits);
  traced.probabilities = raw::softmax(traced.logits.detach(), -1);  // (1, T, V)
  log.add_values("probabilities", {traced.logits.shape()}, traced.probabilities);
  return traced;
}

}  // namespace tg::inspect
