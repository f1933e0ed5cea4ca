// What each stage of the walk-through computes, in words: its title, its formula
// on one line, a sentence or two on why, and the file whose forward and backward
// implement it. Kept apart from the arithmetic (inspect/walkthrough_forward.cpp)
// so the prose can be read, and corrected, in one place.
#pragma once
#include <string>

#include "tinygpt/models/gpt_config.h"

namespace tg::inspect {

struct StageDescription {
  std::string title, formula, explanation, implementation;
};

// kind: a stage id without its "block{i}." prefix ("tokens", "embed.rope",
// "ln_1", "weights", "logits", ...); tokenizer_kind: TextTokenizer::kind().
// The formulas follow the model's switches (positional encoding, GELU
// approximation, tied head, scaled embeddings, and the Llama-style block's norm,
// MLP, KV heads, head size, QK-norm, RoPE pairing and scaling, bias mode).
// An unknown kind throws.
StageDescription describe_stage(const std::string& kind, const GPTConfig& config, const std::string& tokenizer_kind);

// The block's switches where they differ from GPT-2's, for a report's header:
// "RMSNorm, swiglu MLP (H = 352), 2 KV heads for 4 query heads, ..."; empty for GPT-2's block.
std::string block_description(const GPTConfig& config);

}  // namespace tg::inspect
