// The model as a block diagram at the top of the walk-through's web page
// (inspect/html_report.h): one inline SVG, drawn from the stages the walk-through
// recorded, so it follows the model's configuration as they do (LayerNorm or
// RMSNorm, learned or sinusoidal positions or RoPE, QK-norm, a GELU, SwiGLU or
// ReLU^2 MLP, or none):
//
//   tokens -> embed.tokens -> (+ embed.positions) ---------------------------.
//   residual stream |-> ln_1 -> q, k, v -> [q_norm, k_norm] -> scores -> mask  |
//                   |   -> weights -> attend (v) -> concat -> c_proj -> (+) residual_1
//                   |-> ln_2 -> c_fc -> [gate, up] -> gelu | swiglu | relu2
//                   |   -> c_proj_mlp -> (+) residual_2                  x L blocks
//   ln_f -> logits -> probabilities -> predictions (-> loss)
//
// The residual stream is the vertical line the two branches leave and add back
// into. Every box is an <a href="#stage id" data-stage="stage id"> to its
// section; the block drawn is the first shown one, and a line under the drawing
// links every shown block (and each block stage's section links the same stage
// in the others: same_stage_in_blocks). Stages the drawing has no place for are
// listed under it as links, so every section stays reachable.
#pragma once
#include <string>

#include "tinygpt/inspect/walkthrough.h"

namespace tg::inspect {

// <nav id="diagram">: the SVG and the links under it.
std::string block_diagram(const Walkthrough& walkthrough);

// For a stage of a block when several blocks are shown: <nav class="blocks"> linking the
// same stage in every shown block ("block3.q": block0.q, block1.q, ...); else "".
std::string same_stage_in_blocks(const Walkthrough& walkthrough, const Stage& stage);

}  // namespace tg::inspect
