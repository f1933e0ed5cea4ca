// train's flags for the choices of the transformer block (GPTConfig's switches
// of the Llama-style block): what they hold, how they are declared, applied
// to a config, compared with a checkpoint's, and shown in the run header.
#pragma once
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tinygpt/models/gpt_config.h"

namespace tg::cli {

struct BlockFlags {
  std::string norm, norm_weight, mlp, bias, tie_embeddings, rope_scaling, rope_pairing;
  int64_t mlp_hidden = 0, kv_heads = 0, head_dim = 0;
  double rope_theta = 0;
  bool qk_norm = false;
};

// "--norm", "--mlp", ...: each shapes the model, so a resumed run refuses a new
// value and a fine-tuned model keeps its initial model's.
const std::vector<std::string>& block_flag_names();

void add_block_flags(CLI::App& command, BlockFlags& flags);
// The given flags onto config; a combination the block cannot build is a usage
// error naming the flags ("--kv-heads 3 does not divide --heads 4").
void apply_block_flags(const CLI::App& command, const BlockFlags& flags, GPTConfig& config);
// Whether block flag `flag` says what config already holds.
bool block_flag_keeps(const std::string& flag, const BlockFlags& flags, const GPTConfig& config);
// ", RMSNorm, SwiGLU 384, 2 KV heads, ..." for the run header; empty for GPT-2's block.
std::string block_summary(const GPTConfig& config);

}  // namespace tg::cli
