// tinygpt export: writes a model in the Hugging Face layout of its block:
// GPT-2's (models/hf_gpt2.h) or the Llama family's (models/hf_llama.h), which
// transformers reads with from_pretrained and llama.cpp's converter turns into GGUF.
//
//   tinygpt export --ckpt runs/shakespeare-char --out exported/
//   tinygpt export --weights gpt2/ --out copy/      (a round trip)
//   tinygpt export --ckpt runs/llama-small --out llama/ --dtype bf16
//
// The tokenizer goes beside the weights, so `--weights exported/` samples,
// evaluates and explains the model as `--ckpt` did: a BPE's as Hugging Face's
// vocab.json and merges.txt, a char-level model's characters in
// char_vocabulary.txt (tinygpt's own file; its special tokens, if any, in
// char_special_tokens.json).
// What was loaded and what was written go to stderr; stdout stays empty.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "cli/usage_errors.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tokenizer/gpt2_files.h"

namespace tg::cli {

namespace {

struct ExportArguments {
  ModelSourceArguments source;
  std::string out;
  std::string dtype = "f32";
  bool merge = false;
};

void run_export(const ExportArguments& arguments) {
  namespace fs = std::filesystem;
  const fs::path weights = fs::path(arguments.out) / "model.safetensors";
  // A training directory also has a model.safetensors (the checkpoint): never write over one.
  check(!fs::exists(weights) || is_hf_model_directory(arguments.out), "export: --out ", arguments.out,
        " holds a model.safetensors without config.json (a training run's checkpoint?); choose another directory");
  ModelSourceArguments source = arguments.source;
  source.keep_lora_apart = true;  // merged below, only when asked
  const LoadedModel loaded = load_model(source, "export");
  if (loaded.model->lora()) {
    check_usage(arguments.merge, "the model has LoRA adapters; give --merge to fold them into the weights ",
                "(an adapter alone is already in PEFT's layout: its run directory's adapter_model.safetensors)");
    check_usage(loaded.model->weight_format() == DType::Float32, "--merge: the adapters sit on ",
                dtype_name(loaded.model->weight_format()), " weights (a QLoRA run); merge them into the float32 base: ",
                "export --ckpt BASE --lora RUN --merge");
    loaded.model->merge_lora();
  } else {
    check_usage(!arguments.merge, "--merge: the model has no LoRA adapters to merge (give --lora DIR)");
  }
  const DType stored = nn::parse_weight_format(arguments.dtype);
  check(loaded.model->weight_format() == DType::Float32 || loaded.model->weight_format() == stored,
        "export: --dtype ", arguments.dtype, ": the model's weights are ", dtype_name(loaded.model->weight_format()),
        "; export the float32 model");
  std::cerr << "export: " << loaded.description << "\n";
  HfModelInfo info = loaded.hf_info;
  if (info.eos_token_ids.empty()) info.eos_token_ids = loaded.stop_ids;
  export_hf_model(*loaded.model, info, arguments.out, stored);
  std::cerr << "export: wrote " << (fs::path(arguments.out) / "config.json").string() << " and " << weights.string()
            << " (" << loaded.model->parameter_count() << " parameters, " << fs::file_size(weights) << " bytes)\n";
  if (const auto* characters = loaded.tokenizer->as_char()) {
    write_char_vocabulary(arguments.out, *characters);
    std::cerr << "export: the character-level vocabulary (" << loaded.tokenizer->vocab_size()
              << " tokens) went to char_vocabulary.txt"
              << (characters->special_tokens().empty() ? "" : " and char_special_tokens.json")
              << " beside them (not part of GPT-2's layout; tinygpt reads it)\n";
  } else if (const auto* hf = loaded.tokenizer->as_hf()) {
    // A Hugging Face tokenizer goes out as the files it came from.
    write_file_atomically((fs::path(arguments.out) / tokenizer::hf_tokenizer_file_name).string(), hf->tokenizer_json(),
                          "export");
    if (hf->tokenizer_config_json())
      write_file_atomically((fs::path(arguments.out) / tokenizer::hf_tokenizer_config_file_name).string(),
                            *hf->tokenizer_config_json(), "export");
    std::cerr << "export: the tokenizer went to tokenizer.json beside them\n";
  } else {
    tokenizer::write_gpt2_vocabulary(loaded.tokenizer->as_bpe()->vocabulary(), arguments.out,
                                     tokenizer::FileNames::hugging_face);
    std::cerr << "export: the BPE vocabulary (" << loaded.tokenizer->vocab_size()
              << " tokens) went to vocab.json and merges.txt beside them\n";
  }
}

}  // namespace

void add_export_command(CLI::App& app) {
  auto arguments = std::make_shared<ExportArguments>();
  CLI::App* command = app.add_subcommand("export", "Write a model in the Hugging Face layout (GPT-2's or Llama's)");
  add_model_source_options(*command, arguments->source, /*fresh_models=*/false);
  command->add_option("--out", arguments->out, "Directory to write config.json and model.safetensors to")->required();
  command->add_option("--dtype", arguments->dtype, "Weights stored in f32 or bf16 (the Llama layout; GPT-2's is f32)")
      ->check(CLI::IsMember({"f32", "float32", "bf16", "bfloat16"}))
      ->capture_default_str();
  command->add_flag("--merge", arguments->merge,
                    "Fold the LoRA adapters (--lora DIR, or a LoRA run's own) into the weights: W + (alpha / r) B A");
  command->callback([arguments] { run_export(*arguments); });
}

}  // namespace tg::cli
