// The walk-through: one prompt followed through every layer of a GPT, stage by
// stage, with the numbers a learner wants to see at each one.
//
// walk_through() recomputes the model's forward pass step by step from its own
// parameters and the same kernels (nn/functional/), keeping every intermediate
// tensor, and checks itself against GPT::forward (forward_match). The result is
// plain data: inspect/text_report.h prints it in a terminal, inspect/html_report.h
// turns it into a self-contained web page.
//
// Stage order (the order data flows; ids are stable, anchor-safe):
//   tokens                         the prompt cut into tokens
//   embed.tokens, embed.positions, embed.sum (RoPE: embed.rope, the rotation angles)
//     (tokens shows the ids (1, T) as floats, their text is in Walkthrough::tokens;
//      embed.rope shows the angles (T, HS/2) in radians, no embed.positions / embed.sum)
//   block{i}.ln_1, .q, .k, .v, [.q_norm, .k_norm], .scores, .mask, .weights, .attend, .concat,
//     .c_proj, .residual_1,
//   block{i}.ln_2, .c_fc, .gelu | .gate, .up, .swiglu | .relu2, .c_proj_mlp, .residual_2
//                                                                  for each shown block
//   ln_f, logits, probabilities
// The block's stages follow the model's kind (GPTConfig): ln_1, ln_2 and ln_f are
// LayerNorm or RMSNorm; q_norm and k_norm appear with QK-norm (and then hold the
// rotation, which q and k otherwise do); the MLP's activation is gelu, the SwiGLU
// trio gate, up, swiglu, or relu2. With grouped-query attention k and v have KVH
// heads, labelled "KV head g (query heads ...)".
// and then the tables: predictions (top-k per position), loss (with a target),
// causality.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/tensor.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::inspect {

struct Statistics {
  double mean = 0, std = 0, min = 0, max = 0;  // std: population (divides by n)
};
Statistics statistics_of(const Tensor& values);  // over the finite values (a masked -inf is skipped)

// A tensor shown at a stage: float32, contiguous, detached.
struct ShownTensor {
  std::string label;  // "output", "head 0", ...
  Tensor value;
};

enum class StageView {
  Values,     // tensors[0] is the stage's output (shape output_shape); any others are extra views
              // (LayerNorm stages add "normalised (before weight and bias)" and "input",
              // RMSNorm "normalised (before weight)" when it has one and "input", GELU and
              // ReLU^2 "input", SwiGLU "silu(gate)"). Exception: the per-head stages q, k, v,
              // q_norm, k_norm and attend (output (1, NH or KVH, T, HS)) hold one (T, HS)
              // tensor per shown head instead, labelled "head h" (or "KV head g (query
              // heads a..b)" for KVH < NH).
  Attention,  // one (T, T) tensor per shown head, labelled "head h" (scores, mask or weights):
              // drawn as heatmaps. mask holds -inf above the diagonal; weights hold 0 there.
};

struct Stage {
  std::string id;              // "block0.weights"
  std::string group;           // the box of the model diagram it belongs to: "Tokens", "Embeddings",
                               // "Block 0", "Output"
  std::string title;           // "Attention weights"
  std::string formula;         // one line, plain text: "w = softmax(scores + mask) over keys"
  std::string explanation;     // one or two sentences on what it does and why
  std::string implementation;  // where its forward and backward are, "nn/functional/attention.cpp"
  std::vector<std::vector<int64_t>> input_shapes;
  std::vector<int64_t> output_shape;
  StageView view = StageView::Values;
  std::vector<ShownTensor> tensors;
  // With a target: dLoss/d(the stage's output), laid out as the output is in
  // tensors (a values stage: one tensor labelled "output"; a per-head or attention
  // stage: one per shown head, labelled as tensors are). Empty without a target,
  // and for a stage the loss does not reach (the tokens, the probabilities).
  std::vector<ShownTensor> gradients;
  Statistics statistics;           // of the whole output (every head), its finite values
  std::vector<std::string> notes;  // facts for this stage, one line each:
                                   // "before: mean 0.012 var 0.981 / after: mean 0.000 var 1.000"
};

struct TokenRow {
  int64_t position = 0;
  int64_t id = 0;
  std::string text;  // TextTokenizer::display
};

struct Prediction {
  int64_t id = 0;
  std::string text;
  double probability = 0;
};

struct PositionPredictions {
  int64_t position = 0;
  std::string token;             // the token at this position (the last one the model has read)
  std::vector<Prediction> top;   // the top-k next tokens, most likely first
};

struct TargetProbability {
  int64_t position = 0;  // of the target token in the whole sequence (prompt + target)
  int64_t id = 0;
  std::string text;
  double probability = 0;  // that the model gave it, reading the tokens before it
};

struct GradientNorm {
  std::string layer;             // "ln_f" ("ln_f + lm_head" untied), "block 11", ..., "block 0", "embeddings"
  double activation_norm = 0;    // ||dLoss/dx|| of the residual stream entering this layer
                                 // (embeddings: of the token embedding rows wte[ids])
  double parameter_norm = 0;     // ||dLoss/dθ|| over this layer's parameters (embeddings: wte and
                                 // wpe; a tied wte's gradient includes its use as the LM head)
};

struct LossReport {
  double loss = 0;        // mean cross-entropy over the target tokens (natural log)
  double perplexity = 0;  // exp(loss)
  std::vector<TargetProbability> targets;
  std::vector<GradientNorm> gradients;  // from the output back to the embeddings
  // ||dLoss/dx_t|| of the stream entering block i at each position t, for i = 0 .. L
  // (L: entering ln_f): where the gradient flows, by layer and position.
  std::vector<std::vector<double>> stream_gradient_norms;
};

// Why the model expects its top next token at a position, by gradient x input:
// for that token's logit z at `position`, each position s <= position scores
// sum over channels of x[s, c] * dz/dx[s, c], x the stream entering block 0
// (token rows plus positions). It is the first-order share of z owed to what
// stands at s: positive pushes the prediction up, negative down. Attention
// rollout would instead multiply the attention weights through the blocks,
// which ignores the MLPs and the values; this follows the whole model.
struct Attribution {
  int64_t position = 0;
  int64_t id = 0;           // the top next token there
  std::string text;
  double logit = 0;
  std::vector<double> scores;  // one per position 0 .. position
};

struct CausalityCheck {
  int64_t changed_position = 0;      // the last position
  std::string original, replacement;  // the token there before and after the change
  double max_change_earlier = 0;     // max |Δ logits| over positions before it (0 for a causal model)
  double max_change_last = 0;        // max |Δ logits| at the changed position (non-zero)
};

struct Walkthrough {
  std::string model_description;  // what was loaded, from where
  GPTConfig config;
  std::string prompt, target;
  std::vector<TokenRow> tokens;   // prompt + target, as the model reads them
  std::vector<std::string> vocabulary;  // TextTokenizer::display of every id the tokenizer knows (may be
                                        // fewer than config.vocab_size): the logits' columns
  int64_t prompt_tokens = 0;      // tokens[0, prompt_tokens) came from the prompt
  std::vector<Stage> stages;      // in data-flow order
  std::vector<PositionPredictions> predictions;  // one per position
  std::optional<LossReport> loss;                // with a target only
  Attribution attribution;                       // at options.attribute_position
  CausalityCheck causality;
  double forward_match = 0;       // max |logits here - GPT::forward logits|: should be ~0
};

struct WalkthroughOptions {
  std::optional<int64_t> layer;  // only this block's stages (all blocks still run)
  std::optional<int64_t> head;   // only this head in per-head stages
  int64_t top_k = 5;
  std::string target;            // text the model should continue the prompt with (loss, gradients)
  std::optional<int64_t> attribute_position;  // the attribution's position; default: the prompt's last
  std::string model_description;
};

// Throws tg::Error for an empty prompt, a sequence (prompt + target) longer than
// the model's block_size, a --layer or --head out of range; tokenizer errors
// (an unknown character) pass through as tokenizer::TokenizerError.
Walkthrough walk_through(GPT& model, const tokenizer::TextTokenizer& tokenizer, const std::string& prompt,
                         const WalkthroughOptions& options);

}  // namespace tg::inspect
