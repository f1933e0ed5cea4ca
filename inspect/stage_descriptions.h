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
// approximation, tied head, scaled embeddings). An unknown kind throws.
StageDescription describe_stage(const std::string& kind, const GPTConfig& config, const std::string& tokenizer_kind);

}  // namespace tg::inspect
