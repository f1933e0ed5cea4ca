// tinygpt train: trains a character-level GPT on a text file.
//
//   tinygpt train --data input.txt --config cpu-small --iters 2000 --out out/shakespeare
//   tinygpt train --out out/shakespeare --resume --iters 4000   (continue, then extend)
//
// What it writes is described in models/checkpoint.h and models/train_log.h;
// docs/training.md walks through a run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "cli/commands.h"
#include "cli/flag_checks.h"
#include "cli/usage_errors.h"
#include "cli/data_paths.h"
#include "models/checkpoint.h"
#include "models/data.h"
#include "models/train.h"
#include "tensor/error.h"
#include "tensor/threads.h"

namespace tg::cli {

namespace {

struct TrainArguments {
  std::string data;
  std::string preset = "cpu-small";
  std::string out = "out";
  std::string log;
  bool resume = false;
  int threads = 0;
  TrainSettings settings;
  // Model overrides of the preset (applied only when given).
  int64_t layers = 0, heads = 0, dims = 0, block_size = 0, batch_size = 0;
  double dropout = 0;
  std::string positional;
};

// Flags that shape the model or its data: fixed once a run has started.
constexpr const char* kModelFlags[] = {"--config", "--layers", "--heads", "--dims", "--block-size", "--batch-size",
                                       "--dropout", "--positional"};

// The flag of a training setting: "--min-lr" for min_lr.
std::string flag_of(const TrainSetting& setting) {
  std::string flag = std::string("--") + setting.key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// The flags a resumed run rejects: the model's and the training settings' that are not resumable (--seed).
std::vector<std::string> fixed_flags() {
  std::vector<std::string> flags(std::begin(kModelFlags), std::end(kModelFlags));
  for (const TrainSetting& setting : kTrainSettings)
    if (setting.help && !setting.resumable) flags.push_back(flag_of(setting));
  return flags;
}

// A size as the user gave it, or as the preset has it: "--dims 32", "cpu-small's 128 channels".
std::string size_in_user_words(const CLI::App& command, const char* flag, int64_t value, const std::string& preset,
                               const char* noun) {
  if (command.count(flag)) return std::string(flag) + " " + std::to_string(value);
  return preset + "'s " + std::to_string(value) + " " + noun;
}

GPTConfig model_config(const CLI::App& command, const TrainArguments& arguments) {
  // The vocabulary size is set from the corpus later; 1 stands in for it here.
  GPTConfig config = GPTConfig::preset_named(arguments.preset, 1);
  if (command.count("--layers")) config.n_layer = arguments.layers;
  if (command.count("--heads")) config.n_head = arguments.heads;
  if (command.count("--dims")) config.n_embd = arguments.dims;
  if (command.count("--block-size")) config.block_size = arguments.block_size;
  if (command.count("--batch-size")) config.batch_size = arguments.batch_size;
  if (command.count("--dropout")) config.dropout = arguments.dropout;
  if (command.count("--positional")) config.positional = positional_encoding_named(arguments.positional);
  // The shape rules GPTConfig::validate enforces, said with the flags that broke them.
  const std::string dims = size_in_user_words(command, "--dims", config.n_embd, arguments.preset, "channels");
  const std::string heads = size_in_user_words(command, "--heads", config.n_head, arguments.preset, "heads");
  check_usage(config.n_embd % config.n_head == 0, dims, command.count("--dims") ? " is" : " are", " not divisible by ", heads,
              " (each head gets the same share of the channels)");
  check_usage(config.positional != PositionalEncoding::Rope || (config.n_embd / config.n_head) % 2 == 0,
              "with --positional rope the head size must be even (RoPE turns pairs of channels), but ", dims, " / ",
              heads, " is ", config.n_embd / config.n_head);
  return config;
}

std::string count_of(int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

template <class Value>
std::string text_of(const Value& value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

// "cpu-small", or "cpu-small with 1 layer, 32 channels" when flags changed the preset.
std::string model_description(const CLI::App& command, const GPTConfig& config) {
  std::vector<std::string> changes;
  if (command.count("--layers")) changes.push_back(count_of(config.n_layer, "layer"));
  if (command.count("--heads")) changes.push_back(count_of(config.n_head, "head"));
  if (command.count("--dims")) changes.push_back(count_of(config.n_embd, "channel"));
  if (command.count("--block-size")) changes.push_back("block " + text_of(config.block_size));
  if (command.count("--batch-size")) changes.push_back("batch " + text_of(config.batch_size));
  if (command.count("--dropout")) changes.push_back("dropout " + text_of(config.dropout));
  if (command.count("--positional")) changes.push_back(text_of(positional_encoding_name(config.positional)) + " positions");
  std::string text = config.preset;
  for (size_t i = 0; i < changes.size(); ++i) text += (i == 0 ? " with " : ", ") + changes[i];
  return text;
}

// A resumed run keeps the checkpoint's settings except those given on the command line.
void apply_training_overrides(const CLI::App& command, const TrainArguments& arguments, TrainSettings& settings) {
  for (const TrainSetting& setting : kTrainSettings) {
    if (setting.resumable && command.count(flag_of(setting)))
      std::visit([&](auto member) { settings.*member = arguments.settings.*member; }, setting.member);
  }
  settings.validate();
}

std::string millions(int64_t count) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fM", static_cast<double>(count) / 1e6);
  return text;
}

void run_train(const CLI::App& command, const TrainArguments& arguments) {
  namespace fs = std::filesystem;
  if (command.count("--threads")) set_num_threads(arguments.threads);
  // The flags are checked before the corpus is looked for and read.
  const GPTConfig requested_config = model_config(command, arguments);
  const std::string data_path = arguments.data.empty() ? default_corpus_path("train") : arguments.data;
  const std::string corpus = read_text_file(data_path);

  std::unique_ptr<TrainingRun> run;
  if (arguments.resume) {
    for (const std::string& flag : fixed_flags()) {
      check(command.count(flag) == 0, "train --resume: ", flag,
            " cannot change in a resumed run (it continues with the checkpoint's model, data and seed)");
    }
    const std::string latest = (fs::path(arguments.out) / kLatestCheckpointFile).string();
    check(fs::is_regular_file(latest), "train --resume: no checkpoint at '", latest,
          "' (train into --out ", arguments.out, " first)");
    const Checkpoint checkpoint = load_checkpoint(latest);
    TrainSettings settings = checkpoint.header.settings;
    apply_training_overrides(command, arguments, settings);
    run = TrainingRun::resume(checkpoint, corpus, settings);
    std::cerr << "resuming " << latest << " at step " << checkpoint.header.step << "\n";
  } else {
    TrainSettings settings = arguments.settings;
    settings.validate();
    run = TrainingRun::start(corpus, requested_config, settings);
  }

  const GPTConfig& config = run->state().config;
  const TrainSettings& settings = run->state().settings;
  const std::string model = arguments.resume ? config.preset : model_description(command, config);
  std::cerr << "threads: " << thread_info() << "\n"
            << "data: " << data_path << " (" << corpus.size() << " bytes, vocabulary " << config.vocab_size
            << "; train " << run->data().train.size() << " tokens, val " << run->data().val.size() << ")\n"
            << "model: " << model << (model == config.preset ? ", " : ": ") << count_of(config.n_layer, "layer") << ", " << count_of(config.n_head, "head") << ", "
            << config.n_embd << " channels, block " << config.block_size << ", "
            << positional_encoding_name(config.positional) << " positions, dropout " << config.dropout << ", "
            << millions(run->model().parameter_count()) << " parameters\n"
            << "training: " << settings.iters << " steps of " << config.batch_size << " x " << config.block_size
            << " tokens, lr " << settings.lr << " (warmup " << settings.warmup << ", cosine to " << settings.min_lr
            << "), weight decay " << settings.weight_decay << ", grad clip " << settings.grad_clip << ", seed "
            << settings.seed << "\n";
  if (settings.warmup > settings.iters)
    std::cerr << "note: --warmup " << settings.warmup << " is longer than --iters " << settings.iters
              << ": the learning rate warms up over all " << settings.iters << " steps and never decays\n";

  TrainOutputs outputs;
  outputs.out_dir = arguments.out;
  outputs.metrics_path = arguments.log.empty() ? (fs::path(arguments.out) / "metrics.jsonl").string() : arguments.log;
  outputs.progress_is_terminal = isatty(STDERR_FILENO) == 1;
  const auto started = std::chrono::steady_clock::now();
  const TrainResult result = run->train(outputs, std::cerr);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  char summary[200];
  std::snprintf(summary, sizeof summary, "done: step %lld in %.1f s; best val loss %.4f (perplexity %.2f)",
                static_cast<long long>(result.steps), elapsed.count(), result.best_val_loss,
                std::exp(result.best_val_loss));
  std::cerr << summary << "\n";
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto arguments = std::make_shared<TrainArguments>();
  CLI::App* command = app.add_subcommand("train", "Train a character-level GPT on a text file");
  TrainSettings& settings = arguments->settings;
  command->add_option("--data", arguments->data, "Text file to train on (default: tiny Shakespeare, see scripts/data.sh)");
  command->add_option("--config", arguments->preset, "Model preset: cpu-small, baby, gpt2, ...")->capture_default_str();
  command->add_option("--out", arguments->out, "Directory for model.safetensors, best.safetensors, metrics.jsonl")
      ->capture_default_str();
  command->add_flag("--resume", arguments->resume, "Continue the run saved in --out DIR/model.safetensors");
  command->add_option("--log", arguments->log, "JSON Lines metrics file (default: DIR/metrics.jsonl)");
  command->add_option("--layers", arguments->layers, "Override the preset's number of layers")->check(positive_integer());
  command->add_option("--heads", arguments->heads, "Override the preset's attention heads")->check(positive_integer());
  command->add_option("--dims", arguments->dims, "Override the preset's channels (n_embd)")->check(positive_integer());
  command->add_option("--block-size", arguments->block_size, "Override the preset's context length")->check(positive_integer());
  command->add_option("--batch-size", arguments->batch_size, "Override the preset's batch size")->check(positive_integer());
  command->add_option("--dropout", arguments->dropout, "Override the preset's dropout")->check(fraction_below_one());
  command->add_option("--positional", arguments->positional, "Positional encoding")
      ->check(CLI::IsMember({"learned", "sinusoidal", "rope"}));
  for (const TrainSetting& setting : kTrainSettings) {
    if (!setting.help) continue;
    const auto add = [&](auto member) { return command->add_option(flag_of(setting), settings.*member, setting.help); };
    std::visit(add, setting.member)->capture_default_str();
  }
  command->add_option("--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->callback([command, arguments] { run_train(*command, *arguments); });
}

}  // namespace tg::cli
