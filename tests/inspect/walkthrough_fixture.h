// A tiny char-level model and its tokenizer, shared by the inspect/ tests.
#pragma once
#include <doctest/doctest.h>

#include <cmath>
#include <string>
#include <vector>

#include "tinygpt/inspect/walkthrough.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/factory.h"
#include "tests/models/tiny_gpt_config.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::testing {

inline tokenizer::TextTokenizer tiny_tokenizer() {
  return tokenizer::TextTokenizer(tokenizer::CharTokenizer::from_corpus("abcdefgh ,.!\n"));
}

// 2 blocks, 2 heads, C = 8, block_size 8, over tiny_tokenizer()'s 13 characters.
inline GPTConfig tiny_walkthrough_config(PositionalEncoding positional = PositionalEncoding::Learned) {
  return tiny_gpt_config({.vocab_size = tiny_tokenizer().vocab_size(), .positional = positional});
}

// GPT::loss of `model` on the tokens of `text` whose first `prompt_tokens` are
// the prompt: position t predicts token t + 1 from the prompt's last token on,
// as walk_through's loss with a target.
inline Tensor target_loss(GPT& model, const std::string& text, int64_t prompt_tokens) {
  const std::vector<int64_t> ids = tiny_tokenizer().encode(text);
  const int64_t time = static_cast<int64_t>(ids.size());
  std::vector<int64_t> targets(ids.size(), -100);
  for (int64_t t = prompt_tokens - 1; t + 1 < time; ++t) targets[t] = ids[t + 1];
  return model.loss(from_vector(ids, {1, time}), from_vector(targets, {1, time}));
}

// The L2 norm of the gradients of the model's parameters whose names start with one of `prefixes`.
inline double gradient_norm_of(const GPT& model, const std::vector<std::string>& prefixes) {
  double total = 0;
  for (const auto& [name, parameter] : model.named_parameters())
    for (const std::string& prefix : prefixes)
      if (name.starts_with(prefix))
        for (double value : parameter.grad().to_vector<double>()) total += value * value;
  return std::sqrt(total);
}

// Every stage has its words and file, and shows float32, contiguous, detached
// tensors, a values stage's output of the stage's output shape.
inline void check_stages_well_formed(const inspect::Walkthrough& walkthrough) {
  for (const inspect::Stage& stage : walkthrough.stages) {
    CAPTURE(stage.id);
    CHECK(!stage.title.empty());
    CHECK(!stage.formula.empty());
    CHECK(!stage.explanation.empty());
    CHECK(!stage.implementation.empty());
    CHECK(!stage.group.empty());
    REQUIRE(!stage.tensors.empty());
    for (const inspect::ShownTensor& shown : stage.tensors) {
      CHECK(shown.value.dtype() == DType::Float32);
      CHECK(shown.value.is_contiguous());
      CHECK(!shown.value.requires_grad());
    }
    if (stage.view == inspect::StageView::Values && stage.tensors[0].label == "output")
      CHECK(stage.tensors[0].value.shape() == stage.output_shape);
  }
}

// The Llama-style block at tiny_walkthrough_config()'s size: RMSNorm, a SwiGLU
// MLP (H = 12), 4 query heads sharing 2 KV heads, HS = 4 (so NH HS = 16 != C),
// QK-norm, rotate-half RoPE of base 500 with llama3 scaling, biases on qkv only,
// an untied head.
inline GPTConfig tiny_llama_walkthrough_config() {
  GPTConfig config = tiny_walkthrough_config(PositionalEncoding::Rope);
  config.norm = nn::NormKind::RMSNorm;
  config.mlp = nn::MlpKind::SwiGLU;
  config.mlp_hidden = 12;
  config.n_head = 4;
  config.n_kv_head = 2;
  config.head_dim = 4;
  config.qk_norm = true;
  config.bias = nn::BiasMode::Qkv;
  config.rope_base = 500;
  config.rope_scaling = nn::RopeScaling::parse("llama3:4,1,4,8");
  config.rope_pairing = nn::RopePairing::Half;
  config.tie_embeddings = false;
  config.validate();
  return config;
}

// nanochat's block at the same size: RMSNorm without weights, a ReLU^2 MLP,
// multi-query attention (one KV head for 2 query heads), QK-norm, interleaved
// RoPE, no biases, an untied head.
inline GPTConfig tiny_nanochat_walkthrough_config() {
  GPTConfig config = tiny_walkthrough_config(PositionalEncoding::Rope);
  config.norm = nn::NormKind::RMSNorm;
  config.norm_weight = false;
  config.mlp = nn::MlpKind::ReLU2;
  config.n_kv_head = 1;
  config.qk_norm = true;
  config.bias = nn::BiasMode::None;
  config.tie_embeddings = false;
  config.validate();
  return config;
}

}  // namespace tg::testing
