// One block of the walk-through, stage by stage, for every kind the model has:
// LayerNorm or RMSNorm; attention with as many KV heads as query heads or fewer
// (grouped-query), QK-norm and RoPE; a GELU, SwiGLU or ReLU^2 MLP. Each stage is
// computed with the op the model's own layer uses (nn/attention.cpp, nn/mlp.cpp,
// nn/normalization.cpp), so the traced logits equal GPT::forward's.
#include <algorithm>
#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/walkthrough_stage_log.h"
#include "tinygpt/nn/attention.h"
#include "tinygpt/nn/functional/attention.h"
#include "tinygpt/nn/functional/gelu.h"
#include "tinygpt/nn/functional/layer_norm.h"
#include "tinygpt/nn/functional/relu_squared.h"
#include "tinygpt/nn/functional/rms_norm.h"
#include "tinygpt/nn/functional/rope.h"
#include "tinygpt/nn/functional/swiglu.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/tensor/softmax.h"
#include "tinygpt/tensor/view.h"

namespace tg::inspect {

namespace {

constexpr size_t kListedPositions = 16;  // a note lists each position's value for at most this many

// The shapes a Linear reads: x, weight (out, in) and, when it has one, bias (out).
Shapes linear_inputs(const Tensor& x, int64_t out, int64_t in, bool bias) {
  Shapes shapes = {x.shape(), {out, in}};
  if (bias) shapes.push_back({out});
  return shapes;
}

// "0.98, 1.02, ..." for the first kListedPositions values.
std::string listed(const std::vector<double>& values) {
  std::string text;
  for (size_t i = 0; i < std::min(values.size(), kListedPositions); ++i) text += (i ? ", " : "") + number(values[i], 3);
  return values.size() > kListedPositions ? text + ", ..." : text;
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

// As nn::RMSNorm::forward (nn::rms_norm; weight undefined without one), shown
// with each position's RMS, the number it divides by.
Tensor traced_rms_norm(const std::string& kind, const Tensor& x, const Tensor& weight, const GPTConfig& config,
                       StageLog& log) {
  const Tensor y = nn::rms_norm(x, weight, config.norm_eps);  // (1, T, C)
  Shapes inputs = {x.shape()};
  std::vector<ShownTensor> views;
  const Tensor normalised = nn::rms_norm(x.detach(), Tensor(), config.norm_eps);
  if (weight.defined()) {
    inputs.push_back(weight.shape());
    views.push_back({"normalised (before weight)", shown_tensor(normalised)});
  }
  views.push_back({"input", shown_tensor(x)});
  if (Stage* stage = log.add_values(kind, inputs, y, std::move(views))) {
    const std::vector<double> rms = row_rms(x);
    stage->notes.push_back("input RMS per position: " + listed(rms) + " (in " + range_text(rms) + ")");
    stage->notes.push_back("normalised: row RMS in " + range_text(row_rms(normalised)) +
                           " (1, less where eps is not small beside the mean square); " + row_moments(normalised) +
                           " (no mean is subtracted)");
    if (!weight.defined()) stage->notes.push_back("no weight: the output is the normalised values themselves");
  }
  return y;
}

// QK-norm, as the attention's q_norm / k_norm: RMSNorm over each head's vector
// at each position (HS channels), then, with RoPE, the rotation (nn::split_heads'
// order). heads (1, NH or KVH, T, HS) -> the same shape.
Tensor traced_head_norm(const std::string& kind, const Tensor& heads, const Tensor& weight,
                        const nn::TransformerOptions& options, StageLog& log) {
  const Tensor normed = nn::rms_norm(heads, weight, options.norm_eps);
  const Tensor rotated = options.rope ? nn::rope(normed, 0, options.rotary) : normed;
  Shapes inputs = {heads.shape()};
  if (weight.defined()) inputs.push_back(weight.shape());
  if (Stage* stage = log.add_per_head(kind, inputs, rotated, StageView::Values)) {
    stage->notes.push_back("each head's vector at each position: RMS in " + range_text(row_rms(heads)) +
                           " before, in " + range_text(row_rms(normed)) + " after (with the weight)");
    if (options.rope)
      stage->notes.push_back("then rotated by RoPE (nn/functional/rope.cpp) by the angles of embed.rope: the "
                             "rotation keeps each vector's length");
  }
  return rotated;
}

// The note for k or v of grouped-query attention: which query heads read each KV head.
std::string kv_group_note(int64_t heads, int64_t kv_heads) {
  const int64_t group = heads / kv_heads;
  std::string note = std::to_string(kv_heads) + (kv_heads == 1 ? " KV head for " : " KV heads for ") +
                     std::to_string(heads) + " query heads: ";
  for (int64_t g = 0; g < kv_heads; ++g)
    note += (g ? "; " : "") + std::string("KV head ") + std::to_string(g) + " serves query heads " +
            std::to_string(g * group) + ".." + std::to_string(g * group + group - 1);
  return note;
}

// normed (1, T, C) -> the attention branch's output (1, T, C), as
// nn::CausalSelfAttention, with the mask (T, T) built: true above the diagonal,
// where key j comes after query i.
Tensor traced_attention(const Tensor& normed, const BlockParameters& parameters, const GPTConfig& config,
                        StageLog& log) {
  const nn::TransformerOptions options = config.transformer_options(normed.dtype());
  const int64_t time = normed.size(1), channels = config.n_embd, head_size = options.head_size();
  const int64_t heads = options.n_head, kv_heads = options.kv_heads();
  // (1, T, (NH + 2 KVH) HS): the rows of qkv.weight are [q; k; v]
  const Tensor qkv = nn::linear(normed, parameters["attn.qkv.weight"], parameters["attn.qkv.bias"]);
  nn::TransformerOptions projection_only = options;
  projection_only.rope = false;
  // q (1, NH, T, HS), k, v (1, KVH, T, HS): the projections, neither normalised nor rotated yet.
  auto [q, k, v] = nn::split_heads(qkv, projection_only, 0);
  // Without QK-norm the q and k stages show the rotated heads; with it, q_norm and k_norm do.
  const bool rotate_here = options.rope && !options.qk_norm;
  if (rotate_here) {
    q = nn::rope(q, 0, options.rotary);
    k = nn::rope(k, 0, options.rotary);
  }
  const bool qkv_bias = config.bias != nn::BiasMode::None;
  for (const auto& [kind, heads_tensor] : {std::pair{"q", q}, std::pair{"k", k}, std::pair{"v", v}}) {
    const Shapes inputs = linear_inputs(normed, heads_tensor.size(1) * head_size, channels, qkv_bias);
    Stage* stage = log.add_per_head(kind, inputs, heads_tensor, StageView::Values);
    if (!stage) continue;
    if (rotate_here && std::string(kind) != "v")
      stage->notes.push_back("rotated by RoPE (nn/functional/rope.cpp): position t turns channel pair i by t * theta_i");
    if (kv_heads != heads && std::string(kind) != "q") stage->notes.push_back(kv_group_note(heads, kv_heads));
  }
  if (options.qk_norm) {
    q = traced_head_norm("q_norm", q, parameters["attn.q_norm.weight"], options, log);
    k = traced_head_norm("k_norm", k, parameters["attn.k_norm.weight"], options, log);
  }

  // Grouped-query attention: each KV head repeated for the query heads of its group.
  const Tensor keys = nn::repeat_kv_heads(k, heads), values = nn::repeat_kv_heads(v, heads);  // (1, NH, T, HS)
  const std::string repeat_note = "with " + std::to_string(kv_heads) + " KV heads for " + std::to_string(heads) +
                                  " query heads, query head h reads KV head h / " + std::to_string(heads / kv_heads) +
                                  " (nn::repeat_kv_heads)";
  const double scale = 1.0 / std::sqrt(static_cast<double>(head_size));
  const Tensor scores = matmul(q, transpose(keys, -2, -1)) * scale;  // (1, NH, T, T)
  if (Stage* stage = log.add_per_head("scores", {q.shape(), k.shape()}, scores, StageView::Attention)) {
    stage->notes.push_back("scaled by 1/sqrt(HS) = 1/sqrt(" + std::to_string(head_size) + ") = " + number(scale));
    if (kv_heads != heads) stage->notes.push_back("keys: " + repeat_note);
  }
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
  const Tensor attended = matmul(weights, values);  // (1, NH, T, HS)
  if (Stage* stage = log.add_per_head("attend", {weights.shape(), v.shape()}, attended, StageView::Values))
    if (kv_heads != heads) stage->notes.push_back("values: " + repeat_note);
  const int64_t width = options.attention_width();                                   // NH HS
  const Tensor merged = reshape(permute(attended, {0, 2, 1, 3}), {1, time, width});  // (1, T, NH HS)
  log.add_values("concat", {attended.shape()}, merged);
  const Tensor projected = nn::linear(merged, parameters["attn.c_proj.weight"], parameters["attn.c_proj.bias"]);
  log.add_values("c_proj", linear_inputs(merged, channels, width, config.bias == nn::BiasMode::All), projected);
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

// c_fc's output (1, T, H), or (1, T, 2H) for SwiGLU -> the activation (1, T, H),
// as nn::MLP::activation.
Tensor traced_activation(const Tensor& expanded, int64_t hidden, const GPTConfig& config, StageLog& log) {
  if (config.mlp == nn::MlpKind::SwiGLU) {
    const Tensor gate = narrow(expanded, -1, 0, hidden), up = narrow(expanded, -1, hidden, hidden);  // (1, T, H) each
    if (Stage* stage = log.add_values("gate", {expanded.shape()}, gate))
      stage->notes.push_back(negative_share(gate) + " of the gates are negative: silu nearly closes them");
    log.add_values("up", {expanded.shape()}, up);
    const Tensor gated = nn::swiglu(expanded);  // (1, T, H)
    const Tensor gate_values = gate.detach();
    const Tensor opened = gate_values / (exp(-gate_values) + 1.0);  // silu(gate)
    if (Stage* stage = log.add_values("swiglu", {gate.shape(), up.shape()}, gated,
                                      {{"silu(gate)", shown_tensor(opened)}}))
      stage->notes.push_back("silu(gate) in " + range_text(opened.to_vector<double>()) +
                             ": each channel of up is scaled by it");
    return gated;
  }
  if (config.mlp == nn::MlpKind::ReLU2) {
    const Tensor squared = nn::relu_squared(expanded);  // (1, T, H)
    if (Stage* stage = log.add_values("relu2", {expanded.shape()}, squared, {{"input", shown_tensor(expanded)}}))
      stage->notes.push_back(negative_share(expanded) + " of the inputs are negative: ReLU^2 makes them exactly 0");
    return squared;
  }
  const Tensor activated = nn::gelu(expanded, config.gelu);  // (1, T, H)
  if (Stage* stage = log.add_values("gelu", {expanded.shape()}, activated, {{"input", shown_tensor(expanded)}}))
    stage->notes.push_back(negative_share(expanded) + " of the inputs are negative: GELU squeezes them into (-0.17, 0]");
  return activated;
}

// x (1, T, C) -> the MLP branch's output (1, T, C), as nn::MLP.
Tensor traced_mlp(const Tensor& normed, const BlockParameters& parameters, const GPTConfig& config, StageLog& log) {
  const int64_t channels = config.n_embd, hidden = config.transformer_options().hidden_size();
  const bool bias = config.bias == nn::BiasMode::All;
  const Tensor expanded = nn::linear(normed, parameters["mlp.c_fc.weight"], parameters["mlp.c_fc.bias"]);  // (1, T, H or 2H)
  log.add_values("c_fc", linear_inputs(normed, expanded.size(-1), channels, bias), expanded);
  const Tensor activated = traced_activation(expanded, hidden, config, log);  // (1, T, H)
  const Tensor contracted = nn::linear(activated, parameters["mlp.c_proj.weight"], parameters["mlp.c_proj.bias"]);
  log.add_values("c_proj_mlp", linear_inputs(activated, channels, hidden, bias), contracted);
  return contracted;
}

}  // namespace

Tensor traced_norm(const std::string& kind, const Tensor& x, const Tensor& weight, const Tensor& bias,
                   const GPTConfig& config, StageLog& log) {
  if (config.norm == nn::NormKind::RMSNorm) return traced_rms_norm(kind, x, weight, config, log);
  return traced_layer_norm(kind, x, weight, bias, config, log);
}

Tensor traced_block(const Tensor& x, const BlockParameters& parameters, const GPTConfig& config, StageLog& log) {
  const Tensor normed_1 = traced_norm("ln_1", x, parameters["ln_1.weight"], parameters["ln_1.bias"], config, log);
  const Tensor attended = traced_residual("residual_1", x, traced_attention(normed_1, parameters, config, log), log);
  if (config.mlp == nn::MlpKind::None) return attended;  // attention only
  const Tensor normed_2 = traced_norm("ln_2", attended, parameters["ln_2.weight"], parameters["ln_2.bias"], config, log);
  return traced_residual("residual_2", attended, traced_mlp(normed_2, parameters, config, log), log);
}

}  // namespace tg::inspect
