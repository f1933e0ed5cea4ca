// The two graphs `tinygpt explain --graph` draws (inspect/autograd_graph_page.h):
// micrograd's neuron, small enough to check by hand, then one transformer block
// of a real model on a real prompt.
#pragma once
#include <cstdint>
#include <string>

#include "tinygpt/inspect/autograd_graph.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::inspect {

// micrograd's neuron on 0-d float64 tensors with micrograd's values:
//   x1 = 2, x2 = 0, w1 = -3, w2 = 1, b = 6.8813735870195432
//   x1*w1 = -6, x2*w2 = 0, x1*w1 + x2*w2 = -6, n = 0.8813..., o = tanh(n) = 0.7071
// and backward from o (do/do = 1): do/dn = 1 - o^2 = 0.5, do/dx1 = w1 * 0.5 = -1.5,
// do/dw1 = x1 * 0.5 = 1, do/dx2 = w2 * 0.5 = 0.5, do/dw2 = x2 * 0.5 = 0, do/db = 0.5.
AutogradGraph neuron_graph();

// Block `layer` of `model` on the tokens of prompt + target: the walk-through's
// forward (inspect/walkthrough_forward.h, attention composed of its steps, the
// graph cut at each block's input) recorded, the next-token loss differentiated
// down to the block's output (without a target every position predicts the
// prompt's next token; with one, as explain --target, the target's tokens), and
// the block's own tape drawn with the gradient of that loss. Its leaves are the
// block's parameters and x, the stream entering it. Throws tg::Error for a
// layer out of range, fewer than 2 tokens, more than block_size; tokenizer
// errors pass through as tokenizer::TokenizerError.
AutogradGraph block_graph(GPT& model, const tokenizer::TextTokenizer& tokenizer, const std::string& prompt,
                          const std::string& target, int64_t layer);

}  // namespace tg::inspect
