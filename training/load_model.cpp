#include "tinygpt/training/load_model.h"

#include <filesystem>

#include "tinygpt/training/checkpoint.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tokenizer/gpt2_files.h"

namespace tg {

namespace {

LoadedModel from_checkpoint(const std::string& path) {
  const Checkpoint checkpoint = load_checkpoint(path);
  auto model = std::make_unique<GPT>(checkpoint.header.config, 0, DType::Float32, /*initialize=*/false);
  restore_parameters(checkpoint, *model);
  model->eval();
  tokenizer::TextTokenizer tokenizer = tokenizer::TextTokenizer::from_json(checkpoint.header.tokenizer);
  std::string description = checkpoint.path + " (step " + std::to_string(checkpoint.header.step) + ", " +
                            checkpoint.header.config.preset + ", " +
                            (tokenizer.as_char() ? std::string("char-level")
                                                 : "BPE of " + std::to_string(tokenizer.vocab_size()) + " tokens") +
                            ")";
  return {std::move(model), std::move(tokenizer), std::move(description)};
}

tokenizer::TextTokenizer own_vocabulary(const std::string& directory) {
  try {
    if (std::optional<tokenizer::TextTokenizer> characters = read_char_vocabulary(directory)) return std::move(*characters);
    check(tokenizer::has_gpt2_vocabulary(directory) || std::filesystem::exists(std::filesystem::path(directory) / "tokenizer.json"),
          "load_model: ", directory, " holds weights but no tokenizer (tokenizer.json, vocab.json and merges.txt, or "
          "char_vocabulary.txt); load the weights with load_hf_model and the tokenizer with load_tokenizer_directory");
    return tokenizer::load_tokenizer_directory(directory);
  } catch (const tokenizer::TokenizerError& error) {
    fail("load_model: the vocabulary in ", directory, ": ", error.what());
  }
}

}  // namespace

LoadedModel load_model(const std::string& path) {
  namespace fs = std::filesystem;
  check(fs::exists(path), "load_model: '", path, "' does not exist");
  if (fs::is_directory(path) && is_hf_model_directory(path)) {
    tokenizer::TextTokenizer tokenizer = own_vocabulary(path);
    LoadedHfModel loaded = load_hf_model(path);
    std::unique_ptr<GPT> model = std::move(loaded.model);
    model->eval();
    check(tokenizer.vocab_size() <= model->config().vocab_size, "load_model: ", path, ": the vocabulary has ",
          tokenizer.vocab_size(), " tokens, more than the model's ", model->config().vocab_size);
    return {std::move(model), std::move(tokenizer), path + " (Hugging Face " + loaded.info.architecture + " layout)"};
  }
  return from_checkpoint(path);
}

}  // namespace tg
