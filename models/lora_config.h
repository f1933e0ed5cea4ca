// Which projections of a GPT carry LoRA adapters (nn/lora.h), and the names
// Hugging Face PEFT gives them, so an adapter tinygpt trains is one PEFT and
// llama.cpp's converter read, and one PEFT trained loads here.
//
// The projections, by the canonical names tinygpt uses:
//   q, k, v   attention's fused qkv, one row block each   GPT-2: c_attn (all three at once)
//   o         attention's output (attn.c_proj)            Llama: self_attn.o_proj
//   gate, up  the MLP's c_fc: SwiGLU's two row blocks     Llama: mlp.gate_proj, mlp.up_proj
//             (a GELU MLP's c_fc is `up`)                 GPT-2: mlp.c_fc
//   down      the MLP's c_proj                            Llama: mlp.down_proj; GPT-2: mlp.c_proj
// A model with the SwiGLU MLP takes the Llama family's module paths
// (model.layers.{i}.self_attn.q_proj), any other GPT-2's (transformer.h.{i}.attn.c_attn);
// GPT-2's c_attn is one Conv1D, so q, k and v are adapted together there, as PEFT does.
// The LM head and the embeddings are never adapted (PEFT's all-linear leaves the head out too).
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/models/gpt_config.h"
#include "tinygpt/nn/lora.h"

namespace tg {

inline constexpr const char* kLoraProjections[] = {"q", "k", "v", "o", "gate", "up", "down"};

struct LoraConfig {
  nn::LoraSettings settings;
  std::vector<std::string> targets;  // canonical names, in kLoraProjections' order

  nlohmann::json to_json() const;
  static LoraConfig from_json(const nlohmann::json& json);  // validating
  bool operator==(const LoraConfig& other) const;
};

// "q,v", "all-linear", "q_proj,v_proj", "c_attn,c_fc", "attn", "mlp": the canonical targets,
// checked against the model (a gate needs SwiGLU; GPT-2's c_attn takes q, k and v together).
// Throws tg::Error naming `flag` and the item it cannot read.
std::vector<std::string> parse_lora_targets(const std::string& text, const GPTConfig& config, const std::string& flag);
// "q, k, v, o, gate, up and down" for a header line.
std::string describe_lora_targets(const std::vector<std::string>& targets);

// One adapted Linear: its parameter prefix in the model ("blocks.0.attn.qkv"),
// its row blocks, and for each adapted block the PEFT module path
// ("model.layers.0.self_attn.q_proj").
struct LoraModule {
  std::string linear;
  std::vector<nn::LoraPart> parts;
  std::vector<std::string> peft_paths;
};
// Every Linear the targets adapt, layer by layer.
std::vector<LoraModule> lora_modules(const GPTConfig& config, const std::vector<std::string>& targets);
// True when the model takes the Llama family's module paths (its MLP is SwiGLU), false for GPT-2's.
bool uses_llama_module_paths(const GPTConfig& config);
// PEFT's target_modules for adapter_config.json ("q_proj", ...; GPT-2: "c_attn", "attn.c_proj", ...).
std::vector<std::string> peft_target_modules(const GPTConfig& config, const std::vector<std::string>& targets);

}  // namespace tg
