#include "cli/model_source.h"

#include <filesystem>
#include <sstream>

#include "cli/data_paths.h"
#include "cli/usage_errors.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/models/lora_files.h"
#include "tinygpt/training/load_model.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/storage.h"
#include "tinygpt/tokenizer/gpt2_files.h"

namespace tg::cli {

namespace {

std::string vocab_dir_or_default(const ModelSourceArguments& arguments, const char* command) {
  return arguments.vocab.empty() ? default_gpt2_vocab_dir(command) : arguments.vocab;
}

// tokenizer.json, or GPT-2's encoder.json and vocab.bpe (vocab.json and merges.txt).
tokenizer::TextTokenizer load_tokenizer(const std::string& directory, const char* command) {
  try {
    return tokenizer::load_tokenizer_directory(directory);
  } catch (const tokenizer::TokenizerError& error) {
    fail(command, ": --vocab ", directory, ": ", error.what());
  }
}

bool has_own_tokenizer(const std::string& directory) {
  return std::filesystem::is_regular_file(std::filesystem::path(directory) / "tokenizer.json") ||
         tokenizer::has_gpt2_vocabulary(directory);
}

LoadedModel from_checkpoint(const ModelSourceArguments& arguments, const char* command) {
  check(arguments.vocab.empty(), command, ": --vocab is for --weights; a --ckpt carries its own vocabulary");
  // A file: tg::load_model reads it as a checkpoint, whatever directory it sits in.
  tg::LoadedModel checkpoint = tg::load_model(find_checkpoint_for_sampling(arguments.checkpoint));
  LoadedModel loaded;
  loaded.model = std::move(checkpoint.model);
  loaded.tokenizer.emplace(std::move(checkpoint.tokenizer));
  loaded.description = std::move(checkpoint.description);
  return loaded;
}

LoadedModel from_weights(const ModelSourceArguments& arguments, const char* command) {
  check(std::filesystem::is_directory(arguments.weights), command, ": --weights ", arguments.weights,
        " is not a directory; it takes a model in the Hugging Face layout (config.json and model.safetensors, or its "
        "shards with model.safetensors.index.json), as the Hub publishes GPT-2, Llama, Mistral and Qwen models "
        "(docs/open_models.md says how to get them)");
  LoadedModel loaded;
  // bf16 is loaded as such (a BF16 file is copied as stored); int8 is quantized from float32.
  const bool direct_bf16 = !arguments.quantize.empty() && nn::parse_weight_format(arguments.quantize) == DType::BFloat16;
  LoadedHfModel hf = load_hf_model(arguments.weights, direct_bf16 ? DType::BFloat16 : DType::Float32);
  loaded.model = std::move(hf.model);
  loaded.hf_info = std::move(hf.info);
  loaded.stop_ids = loaded.hf_info.eos_token_ids;
  const std::string layout = "Hugging Face " + loaded.hf_info.architecture + " layout" +
                             (loaded.hf_info.note.empty() ? "" : ", " + loaded.hf_info.note);
  // A char-level model that tinygpt exported carries its characters beside the weights.
  std::optional<tokenizer::TextTokenizer> characters;
  try {
    characters = read_char_vocabulary(arguments.weights);
  } catch (const tokenizer::TokenizerError& error) {  // it names the file
    fail(command, ": ", error.what());
  }
  if (characters) {
    check(arguments.vocab.empty(), command, ": --vocab is for BPE models; ", arguments.weights,
          " is a char-level model with its own char_vocabulary.txt");
    loaded.tokenizer.emplace(std::move(*characters));
    loaded.description = arguments.weights + " (" + layout + ", char-level vocabulary)";
    return loaded;
  }
  // A Hugging Face model directory brings its tokenizer (tokenizer.json, or GPT-2's vocab.json and merges.txt).
  const bool own_vocabulary = arguments.vocab.empty() && has_own_tokenizer(arguments.weights);
  check(own_vocabulary || !arguments.vocab.empty() || loaded.hf_info.architecture == "GPT2LMHeadModel", command, ": ",
        arguments.weights, " has no tokenizer.json; give the tokenizer's directory with --vocab DIR");
  const std::string vocab = own_vocabulary ? arguments.weights : vocab_dir_or_default(arguments, command);
  loaded.tokenizer.emplace(load_tokenizer(vocab, command));
  loaded.description = arguments.weights + " (" + layout + "; tokenizer from " + vocab + ")";
  return loaded;
}

LoadedModel from_preset(const ModelSourceArguments& arguments, const char* command) {
  LoadedModel loaded;
  if (GPTConfig::preset_uses_gpt2_vocabulary(arguments.config)) {
    check(arguments.data.empty(), command, ": --data is for character-level presets; ", arguments.config,
          " uses the GPT-2 BPE");
    const std::string vocab = vocab_dir_or_default(arguments, command);
    loaded.tokenizer.emplace(load_tokenizer(vocab, command));
    loaded.description = "a fresh " + arguments.config + " (seed " + std::to_string(arguments.seed) + "; BPE from " +
                         vocab + ")";
  } else {
    check(arguments.vocab.empty(), command, ": --vocab is for GPT-2 presets; ", arguments.config,
          " is character-level (its characters come from --data)");
    const std::string corpus_path = arguments.data.empty() ? default_corpus_path(command) : arguments.data;
    try {
      loaded.tokenizer.emplace(tokenizer::CharTokenizer::from_corpus(read_text_file(corpus_path)));
    } catch (const tokenizer::TokenizerError& error) {
      fail(command, ": --data ", corpus_path, ": ", error.what());
    }
    loaded.description = "a fresh " + arguments.config + " (seed " + std::to_string(arguments.seed) +
                         "; characters of " + corpus_path + ")";
  }
  const GPTConfig config = GPTConfig::preset_named(arguments.config, loaded.tokenizer->vocab_size());
  loaded.model = std::make_unique<GPT>(config, arguments.seed);
  return loaded;
}

// --lora DIR on the loaded model; then, unless the command keeps them apart (eval) or the weights
// are quantized, every adapter (--lora's, or a LoRA run's own) folded into the weights, so
// generation takes the fused decode step.
void apply_lora(const ModelSourceArguments& arguments, const char* command, LoadedModel& loaded) {
  GPT& model = *loaded.model;
  if (!arguments.lora.empty()) {
    check(!model.lora() || model.weight_format() == DType::Float32, command, ": --lora ", arguments.lora,
          ": the model is a QLoRA run's, with adapters on ", dtype_name(model.weight_format()),
          " weights; apply another adapter to its float32 base");
    if (model.lora()) model.merge_lora();  // a LoRA run's own adapters first, then --lora's on top
    const LoraConfig lora = load_peft_adapter(arguments.lora, model);
    std::ostringstream text;
    text << "; LoRA adapter " << arguments.lora << " (rank " << lora.settings.rank << ", alpha " << lora.settings.alpha
         << ", on " << describe_lora_targets(lora.targets) << ")";
    loaded.description += text.str();
  } else if (model.lora()) {
    loaded.description += "; with its LoRA adapters (rank " + std::to_string(model.lora()->settings.rank) + ")";
  }
  // Quantized weights (a QLoRA run's) cannot take the update: the adapters then stay apart.
  if (model.lora() && !arguments.keep_lora_apart && model.weight_format() == DType::Float32) model.merge_lora();
}

}  // namespace

void add_model_source_options(CLI::App& command, ModelSourceArguments& arguments, bool fresh_models) {
  auto* checkpoint = command.add_option("--ckpt", arguments.checkpoint,
                                        "tinygpt checkpoint file, or a training directory (its best.safetensors, "
                                        "else model.safetensors)");
  auto* weights = command.add_option("--weights", arguments.weights,
                                     "A model in the Hugging Face layout (GPT-2, Llama, Mistral, Qwen2, Qwen3): DIR with "
                                     "config.json and model.safetensors (or shards and their index)");
  checkpoint->excludes(weights);
  command.add_option("-m,--model", arguments.model,
                     "Either of the two, told apart by what the path holds (llama.cpp's -m)")
      ->excludes(checkpoint)
      ->excludes(weights);
  command.add_option("--vocab", arguments.vocab,
                     "GPT-2 BPE files (encoder.json, vocab.bpe) for --weights or a GPT-2 --config "
                     "(default: ../shared/data/gpt2)");
  command.add_option("--quantize", arguments.quantize,
                     "Run with the weights in bf16 or int8 (blocks of 32 with a scale each), as tinygpt quantize writes them")
      ->check(CLI::IsMember({"bf16", "bfloat16", "int8"}));
  command.add_option("--lora", arguments.lora,
                     "A LoRA adapter to apply: DIR with adapter_config.json and adapter_model.safetensors (Hugging "
                     "Face PEFT's layout, as train --lora-rank writes it)");
  arguments.fresh_models = fresh_models;
  if (!fresh_models) return;
  auto* config = command.add_option("--config", arguments.config,
                                    "A freshly initialised preset instead: cpu-small, baby, gpt2, ...");
  config->excludes(checkpoint)->excludes(weights);
  command.add_option("--seed", arguments.seed, "Seed of the fresh model's weights")->capture_default_str();
  command.add_option("--data", arguments.data,
                     "Corpus whose characters make a fresh char-level model's vocabulary (default: tiny Shakespeare)");
}

LoadedModel load_model(const ModelSourceArguments& given, const char* command) {
  ModelSourceArguments arguments = given;
  if (!arguments.model.empty()) {
    (is_hf_model_directory(arguments.model) ? arguments.weights : arguments.checkpoint) = arguments.model;
  }
  const int sources = !arguments.checkpoint.empty() + !arguments.weights.empty() + !arguments.config.empty();
  check_usage(sources == 1, "give a model: --ckpt DIR (a tinygpt run or checkpoint)",
              arguments.fresh_models ? ", --weights DIR (a Hugging Face model) or --config NAME (a fresh "
                                       "preset)"
                                     : " or --weights DIR (a Hugging Face model)");
  LoadedModel loaded = !arguments.checkpoint.empty() ? from_checkpoint(arguments, command)
                       : !arguments.weights.empty()  ? from_weights(arguments, command)
                                                     : from_preset(arguments, command);
  const int64_t model_vocab = loaded.model->config().vocab_size;
  // A model's table may be padded past its tokenizer's vocabulary to a multiple of 64 (nanoGPT's 50,304
  // for GPT-2's 50,257; a published model's tokenizer.json may leave more rows unused, 267 in Qwen3's);
  // a gap larger than that is another model's vocabulary, which would sample ids it has no text for.
  const int64_t unused_rows_allowed = loaded.tokenizer->as_hf() ? 1024 : 64;
  check(loaded.tokenizer->vocab_size() <= model_vocab && model_vocab - loaded.tokenizer->vocab_size() < unused_rows_allowed, command,
        ": the tokenizer has ", loaded.tokenizer->vocab_size(), " tokens and the model ", model_vocab,
        " (the vocabulary files do not belong to this model)");
  if (loaded.stop_ids.empty())
    if (const std::optional<int64_t> end_of_text = loaded.tokenizer->end_of_text_id()) loaded.stop_ids = {*end_of_text};
  apply_lora(arguments, command, loaded);
  if (!arguments.quantize.empty() && loaded.model->weight_format() != nn::parse_weight_format(arguments.quantize)) {
    check(loaded.model->weight_format() == DType::Float32, command, ": --quantize ", arguments.quantize, ": the model's weights are ",
          dtype_name(loaded.model->weight_format()), " already");
    loaded.model->quantize(nn::parse_weight_format(arguments.quantize));
    Storage::release_cached();  // the float32 matrices just replaced
  }
  if (loaded.model->weight_format() != DType::Float32)
    loaded.description += "; weights in " + std::string(dtype_name(loaded.model->weight_format()));
  loaded.model->eval();
  return loaded;
}

}  // namespace tg::cli
