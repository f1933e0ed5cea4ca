#include "tinygpt/inspect/walkthrough_forward.h"

#include <cmath>

#include "tinygpt/autograd/ops.h"
#include "tinygpt/inspect/format.h"
#include "tinygpt/inspect/stage_descriptions.h"
#include "tinygpt/inspect/walkthrough_stage_log.h"
#include "tinygpt/nn/linear.h"
#include "tinygpt/nn/positional.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/softmax.h"
#include "tinygpt/tensor/view.h"

namespace tg::inspect {

namespace {

// The rotation angles t * theta_i (T, HS/2), theta_i the rotary's inverse
// frequencies (rescaled): the angles nn::rope turns by.
Tensor rope_angles(int64_t time, const std::vector<double>& frequencies) {
  const int64_t pairs = static_cast<int64_t>(frequencies.size());
  std::vector<double> angles(time * pairs);
  for (int64_t t = 0; t < time; ++t)
    for (int64_t i = 0; i < pairs; ++i) angles[t * pairs + i] = static_cast<double>(t) * frequencies[i];
  return from_vector(angles, {time, pairs});
}

// embed.rope's notes: how fast the pairs turn, which channels pair up, and what
// the rescaling (if any) did to each pair.
void note_rotation(Stage& stage, const nn::Rotary& rotary, int64_t head_size) {
  nn::Rotary plain;  // the same base, no rescaling
  plain.base = rotary.base;
  const std::vector<double> unscaled = plain.inverse_frequencies(head_size);
  const std::vector<double> frequencies = rotary.inverse_frequencies(head_size);
  stage.notes.push_back("pair i turns by theta_i = " + number(rotary.base, 8) + "^(-2i/" + std::to_string(head_size) +
                        ") radians per position: from 1 (i = 0) down to " + number(unscaled.back()));
  stage.notes.push_back(rotary.pairing == nn::RopePairing::Half
                            ? "pairs are channels (i, i + HS/2): rotate-half, as Llama, Qwen and Hugging Face's "
                              "checkpoints"
                            : "pairs are channels (2i, 2i+1): interleaved, as the RoFormer paper");
  const nn::RopeScaling& scaling = rotary.scaling;
  if (scaling.kind == nn::RopeScaling::Kind::Linear)
    stage.notes.push_back("rescaled (" + scaling.text() + "): every theta_i divided by " + number(scaling.factor) +
                          ", so positions are squeezed " + number(scaling.factor) + " times");
  if (scaling.kind == nn::RopeScaling::Kind::Llama3) {
    int64_t kept = 0, divided = 0;
    for (size_t i = 0; i < frequencies.size(); ++i) {
      const double ratio = unscaled[i] / frequencies[i];
      kept += std::abs(ratio - 1) < 1e-9;
      divided += std::abs(ratio - scaling.factor) < 1e-9 * scaling.factor;
    }
    const int64_t pairs = static_cast<int64_t>(frequencies.size());
    stage.notes.push_back("rescaled (" + scaling.text() + "): of the " + std::to_string(pairs) + " pairs, " +
                          std::to_string(kept) + " fast ones kept (wavelength under " +
                          number(scaling.original_context / scaling.high_freq_factor) + " positions), " +
                          std::to_string(divided) + " slow ones divided by " + number(scaling.factor) +
                          " (wavelength over " + number(scaling.original_context / scaling.low_freq_factor) + "), " +
                          std::to_string(pairs - kept - divided) + " blended; theta_i now from " +
                          number(frequencies.front()) + " down to " + number(frequencies.back()));
  }
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
    const nn::Rotary rotary = config.transformer_options().rotary;
    const int64_t head_size = config.head_size();
    const Tensor angles = rope_angles(time, rotary.inverse_frequencies(head_size));  // (T, HS/2)
    if (Stage* stage = log.add_values("embed.rope", {{time}}, angles)) note_rotation(*stage, rotary, head_size);
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
                             std::vector<Stage>& stages, bool differentiate_stream) {
  TracedForward traced;
  StageLog log(config, options, tokenizer_kind, stages, traced.stage_outputs);
  traced.residual.push_back(cut(traced_embedding(config, parameters, ids, log, traced)));
  if (differentiate_stream) traced.residual.back().leaf.set_requires_grad();
  for (int64_t layer = 0; layer < config.n_layer; ++layer) {
    log.enter_block(layer);
    const Tensor output = traced_block(traced.residual.back().leaf, BlockParameters(parameters, layer), config, log);
    traced.residual.push_back(cut(output));
  }

  log.enter("Output", "", true);
  const Tensor& x = traced.residual.back().leaf;  // (1, T, C)
  auto optional_parameter = [&](const std::string& name) {  // undefined when the model has none
    const auto found = parameters.find(name);
    return found == parameters.end() ? Tensor() : found->second;
  };
  const Tensor normed =
      traced_norm("ln_f", x, optional_parameter("ln_f.weight"), optional_parameter("ln_f.bias"), config, log);
  const auto head = parameters.find("lm_head.weight");
  const Tensor& head_weight = head == parameters.end() ? parameters.at("wte.weight") : head->second;  // (V, C)
  traced.logits = nn::linear(normed, head_weight, Tensor());  // (1, T, C) -> (1, T, V)
  log.add_values("logits", {normed.shape(), head_weight.shape()}, traced.logits);
  traced.probabilities = raw::softmax(traced.logits.detach(), -1);  // (1, T, V)
  log.add_values("probabilities", {traced.logits.shape()}, traced.probabilities);
  return traced;
}

}  // namespace tg::inspect
