// The walk-through's forward pass (inspect/walkthrough.h): GPT::forward redone
// one stage at a time from the model's parameters, with the model's own
// differentiable ops (nn::layer_norm or nn::rms_norm, the Linear's matmul,
// nn::split_heads, nn::rope, nn::repeat_kv_heads, nn::gelu, nn::swiglu or
// nn::relu_squared, ...), keeping what each stage produced. The embeddings and
// the output are here (walkthrough_forward.cpp), each block's stages in
// walkthrough_block.cpp.
//
// Two differences from GPT::forward, both on purpose:
// - attention is composed of its steps (q k^T / sqrt(HS), the mask, softmax,
//   the weighted sum) as nn::causal_attention_reference does, because the fused
//   nn::causal_attention never materialises the scores; forward_match measures
//   the difference (float rounding only);
// - the graph is cut at every layer boundary (GraphCut), so a backward can be
//   run one layer at a time and the gradient reaching each layer read off.
// Dropout is left out: the walk-through is an evaluation-mode forward.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "tinygpt/inspect/walkthrough.h"

namespace tg::inspect {

// The model's parameters as leaves of the walk-through's own graph: detached
// handles on the same data (GPT's parameter names), requiring grad when a loss
// will be differentiated. Gradients land on these handles, never on the model's.
using ParameterLeaves = std::map<std::string, Tensor>;
ParameterLeaves parameter_leaves(const GPT& model, bool requires_grad);

// A cut in the graph at a layer boundary: `computed` ends the segment before it;
// `leaf`, its detached copy (requiring grad when the parameters do), starts the
// segment after. backward(computed, leaf.grad()) carries the gradient across.
struct GraphCut {
  Tensor computed, leaf;
};

// A shown stage's output as the graph holds it (not detached), so that a
// backward can read the gradient reaching it; `heads` are those the stage
// shows, for a per-head stage (empty for a values stage).
struct StageOutput {
  size_t stage = 0;  // index into the stages
  Tensor output;
  std::vector<int64_t> heads;
};

struct TracedForward {
  Tensor logits;         // (1, T, V), in the graph when the parameters require grad
  Tensor probabilities;  // (1, T, V), softmax of the logits (not in the graph)
  GraphCut token_rows;   // wte[ids] (1, T, C): the gradient reaching the token embeddings
  std::vector<GraphCut> residual;  // the stream entering block 0 .. L-1, then entering ln_f: L + 1 cuts
  std::vector<StageOutput> stage_outputs;  // of every shown stage but the tokens, in order
};

// Runs the forward on ids (1, T) int64, appending the stages that `options`
// keeps (every block, or the one options.layer names; every head, or
// options.head) to `stages`, from embed.tokens to probabilities. With
// `differentiate_stream` the stream entering block 0 (residual[0].leaf)
// requires grad even when the parameters do not: the attribution's backward
// reaches it alone.
TracedForward traced_forward(const GPTConfig& config, const ParameterLeaves& parameters, const Tensor& ids,
                             const WalkthroughOptions& options, const std::string& tokenizer_kind,
                             std::vector<Stage>& stages, bool differentiate_stream = false);

// Float32, contiguous, detached, owning its data (the model may train on afterwards).
Tensor shown_tensor(const Tensor& x);
// A stage of the walk-through: `kind` is its id without the "block{i}." prefix.
Stage make_stage(const std::string& id_prefix, const std::string& kind, const std::string& group,
                 const GPTConfig& config, const std::string& tokenizer_kind);

}  // namespace tg::inspect
