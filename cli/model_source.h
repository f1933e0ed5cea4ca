// Where a command gets its model and tokenizer from, the same flags everywhere:
//
//   -m, --model PATH  either of the next two, told apart by what PATH holds
//   --ckpt PATH       a tinygpt checkpoint file or training directory (char-level
//                     models carry their vocabulary)
//   --weights DIR     a model in the Hugging Face layout: GPT-2 (models/hf_gpt2.h) or the
//                     Llama family (models/hf_llama.h), with the tokenizer in DIR, else
//                     from --vocab DIR (default for GPT-2: ../shared/data/gpt2)
//   --config NAME     a freshly initialised preset (--seed S): char-level presets
//                     take their vocabulary from --data FILE (default: tiny
//                     Shakespeare), GPT-2 presets the GPT-2 BPE
// Exactly one of them; commands that cannot use a fresh model do not offer --config.
//   --lora DIR        a LoRA adapter in PEFT's layout applied to the model (merged into its
//                     weights, but for eval)
//   --quantize bf16|int8   keeps the loaded float32 weights in that format from then on
//                     (nn/quantize.h), as if `tinygpt quantize` had written them.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include <CLI/CLI.hpp>

#include "tinygpt/models/gpt.h"
#include "tinygpt/models/hf_llama.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg::cli {

struct ModelSourceArguments {
  std::string model;  // -m: a checkpoint or a Hugging Face directory, whichever the path holds
  std::string checkpoint;
  std::string weights;
  std::string vocab;
  std::string config;
  std::string data;
  uint64_t seed = 1337;
  std::string quantize;  // "", or bf16 / bfloat16 / int8
  std::string lora;      // --lora DIR: a PEFT adapter applied to the model (models/lora_files.h)
  // Adapters stay apart from the weights (eval: the loss as training computed it); else they are
  // merged into them once loaded, which generation's fused decode step needs.
  bool keep_lora_apart = false;
  bool fresh_models = false;  // --config is offered (set by add_model_source_options)
};

// Registers --ckpt, --weights, --vocab, --quantize and, when `fresh_models`,
// --config, --seed and --data on `command`.
void add_model_source_options(CLI::App& command, ModelSourceArguments& arguments, bool fresh_models);

struct LoadedModel {
  std::unique_ptr<GPT> model;
  std::optional<tokenizer::TextTokenizer> tokenizer;  // always set by load_model
  std::string description;  // one line for stderr: what was loaded, from where (and in which weight format)
  // The ids that end a generated text: config.json's eos_token_id for --weights, else the
  // tokenizer's end of text (GPT-2's <|endoftext|>), else none.
  std::vector<int64_t> stop_ids;
  HfModelInfo hf_info;  // --weights only: the architecture and token ids config.json gives
};

// Loads what the arguments name (in eval mode). Throws tg::Error naming
// `command` when none or more than one source is given, or when the files are
// bad; tokenizer files that do not fit the model (vocabulary sizes differ) are
// an error too.
LoadedModel load_model(const ModelSourceArguments& arguments, const char* command);

}  // namespace tg::cli
