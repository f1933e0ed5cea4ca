// One call from a path to a model ready to generate and the tokenizer it reads:
//
//   tg::LoadedModel loaded = tg::load_model("out/shakespeare");   // a run, a checkpoint or a GPT-2 DIR
//   std::vector<int64_t> ids = loaded.tokenizer.encode("ROMEO:");
//   tg::generate(*loaded.model, ids, options, on_token);           // models/generate.h
//
// What the path may be:
//   a tinygpt checkpoint file, or a run's directory (its best.safetensors, else
//     model.safetensors: training/checkpoint.h), which carries its own tokenizer;
//   a model in the Hugging Face layout (models/hf_directory.h: GPT-2 or the Llama
//     family) that carries its tokenizer: tokenizer.json, vocab.json and
//     merges.txt as published, or the char_vocabulary.txt of a char-level model
//     tinygpt exported.
// The model is in eval mode, in the checkpoint's weight format.
#pragma once
#include <memory>
#include <string>

#include "tinygpt/models/gpt.h"
#include "tinygpt/tokenizer/text_tokenizer.h"

namespace tg {

struct LoadedModel {
  std::unique_ptr<GPT> model;
  tokenizer::TextTokenizer tokenizer;
  std::string description;  // one line: what was loaded, from where
};

// Throws tg::Error naming the path when it is none of the above, or its files are bad.
LoadedModel load_model(const std::string& path);

}  // namespace tg
