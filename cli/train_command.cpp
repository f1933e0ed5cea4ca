// tinygpt train: trains a GPT on a text file or a prepared token dataset.
//
//   tinygpt train --data input.txt --config cpu-small --iters 2000 --out out/shakespeare
//   tinygpt train --out out/shakespeare --resume --iters 4000   (continue, then extend)
//   tinygpt train --config-file run.toml --iters 100   (flags from a file; the command line wins)
//   tinygpt train --data input.txt --tokenizer gpt2 --config baby --out out/bpe   (GPT-2's BPE, in memory)
//   tinygpt train --data data/owt --config gpt2 --grad-accum 8 --checkpoint-activations   (tinygpt prepare's output)
//   tinygpt train --init-from gpt2/ --data data/mytext --lr 3e-5 --iters 200   (fine-tune GPT-2's weights)
//   tinygpt train --init-from SmolLM2-135M-Instruct/ --data chats.jsonl --val-data val.jsonl   (chat SFT: the loss
//                 on the assistant's tokens only, datasets/conversation_data.h)
//   mpirun -np 4 --hostfile hosts tinygpt train --data data/owt --config gpt2   (data parallel, distributed/)
//
// What it writes is described in training/checkpoint.h and training/train_log.h;
// docs/training.md walks through a run. A run is never overwritten or silently
// changed: a new run into a directory that holds one needs --overwrite, and a
// resumed run continues on the data its checkpoint records unless told
// otherwise (--allow-new-data). Ctrl-C saves before it stops (cli/stop_signals.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "cli/block_flags.h"
#include "cli/commands.h"
#include "cli/config_file.h"
#include "tinygpt/tensor/cpu/gemm_bf16.h"
#include "cli/flag_checks.h"
#include "cli/usage_errors.h"
#include "cli/data_paths.h"
#include "cli/model_source.h"
#include "tinygpt/models/lora_files.h"
#include "cli/output_paths.h"
#include "cli/run_directory_lock.h"
#include "cli/stop_signals.h"
#include "tinygpt/distributed/job.h"
#include "tinygpt/inspect/profile_table.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/training/optimizer_setup.h"
#include "tinygpt/training/train.h"
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/tokenizer/errors.h"
#include "tinygpt/tensor/error.h"
#include "tinygpt/tensor/runtime/threads.h"

namespace tg::cli {

namespace {

struct TrainArguments {
  std::string data;
  std::string val_data;   // conversations only: the val split's file (default: the last 10% of --data's)
  std::string tokenizer;  // char, gpt2 or a bpe-train DIR: how a text --data is tokenised
  std::string vocab;      // GPT-2's BPE files for --tokenizer gpt2
  std::string init_from;
  std::string preset = "cpu-small";
  std::string out = "out";
  std::string log;
  bool resume = false;
  bool overwrite = false;       // a new run may replace the one in --out
  bool allow_new_data = false;  // a resumed run may continue on other data than its checkpoint records
  std::string config_file;      // --config-file: flags from a TOML file
  bool checkpoint_activations = false;
  std::string dtype = "float32";  // of the Linear products: float32, or bf16 (mixed precision)
  bool profile = false;
  int threads = 0;
  TrainSettings settings;
  // Model overrides of the preset (applied only when given).
  int64_t layers = 0, heads = 0, dims = 0, block_size = 0, batch_size = 0;
  double dropout = 0;
  std::string positional;
  BlockFlags block;  // the block's switches (cli/block_flags.h)
};

// Flags that shape the model or its data: fixed once a run has started.
std::vector<std::string> model_flags() {
  std::vector<std::string> flags = {"--config",     "--layers",     "--heads",   "--dims",
                                    "--block-size", "--batch-size", "--dropout", "--positional"};
  flags.insert(flags.end(), block_flag_names().begin(), block_flag_names().end());
  return flags;
}

// The flag of a training setting: "--min-lr" for min_lr.
std::string flag_of(const TrainSetting& setting) {
  std::string flag = std::string("--") + setting.key;
  std::replace(flag.begin(), flag.end(), '_', '-');
  return flag;
}

// TrainSettings::validate's complaint about a flag's value is a usage error (exit code 2).
void validate_flags(const TrainSettings& settings) {
  try {
    settings.validate();
  } catch (const Error& error) {
    std::string message = error.what();
    if (message.rfind("train: ", 0) == 0) message.erase(0, 7);  // usage_error_message names the command
    throw CLI::ValidationError(message);
  }
}

// --config names a preset: a near miss ("cpu_small") gets the name it was meant to be.
void check_preset_name(const std::string& name) {
  const std::vector<std::string> presets = GPTConfig::preset_list();
  if (std::find(presets.begin(), presets.end(), name) != presets.end()) return;
  std::string known;
  for (const std::string& preset : presets) known += (known.empty() ? "" : ", ") + preset;
  const std::string suggestion = closest_name(name, presets);
  check_usage(false, "--config ", name, " is not a model preset", suggestion.empty() ? "" : "; did you mean ",
              suggestion, suggestion.empty() ? "" : "?", " (presets: ", known, ")");
}

// Flags that shape the model itself: a fine-tuned model has its initial model's.
std::vector<std::string> architecture_flags() {
  std::vector<std::string> flags = {"--config", "--layers", "--heads", "--dims", "--positional"};
  flags.insert(flags.end(), block_flag_names().begin(), block_flag_names().end());
  return flags;
}

// The flags a resumed run rejects: the model's and the training settings' that are not resumable (--seed).
std::vector<std::string> fixed_flags() {
  std::vector<std::string> flags = model_flags();
  flags.push_back("--init-from");
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

// The options of a run that are not the model's shape: a fine-tuning run may change them too.
void apply_run_overrides(const CLI::App& command, const TrainArguments& arguments, GPTConfig& config) {
  if (command.count("--block-size")) config.block_size = arguments.block_size;
  if (command.count("--batch-size")) config.batch_size = arguments.batch_size;
  if (command.count("--dropout")) config.dropout = arguments.dropout;
}

GPTConfig model_config(const CLI::App& command, const TrainArguments& arguments) {
  check_preset_name(arguments.preset);
  // The vocabulary size is set from the corpus later; 1 stands in for it here.
  GPTConfig config = GPTConfig::preset_named(arguments.preset, 1);
  if (command.count("--layers")) config.n_layer = arguments.layers;
  if (command.count("--heads")) config.n_head = arguments.heads;
  if (command.count("--dims")) config.n_embd = arguments.dims;
  apply_run_overrides(command, arguments, config);
  if (command.count("--positional")) config.positional = positional_encoding_named(arguments.positional);
  apply_block_flags(command, arguments.block, config);
  // The shape rules GPTConfig::validate enforces, said with the flags that broke them.
  const std::string dims = size_in_user_words(command, "--dims", config.n_embd, arguments.preset, "channels");
  const std::string heads = size_in_user_words(command, "--heads", config.n_head, arguments.preset, "heads");
  check_usage(config.head_dim > 0 || config.n_embd % config.n_head == 0, dims, command.count("--dims") ? " is" : " are",
              " not divisible by ", heads, " (each head gets the same share of the channels, unless --head-dim sizes them)");
  const std::string head_size = config.head_dim > 0 ? "--head-dim " + std::to_string(config.head_dim)
                                                    : dims + " / " + heads + " is " + std::to_string(config.head_size());
  check_usage(config.n_layer > 0 || config.positional == PositionalEncoding::Rope,
              "--layers 0 (a bigram model) needs --positional rope: without attention nothing could read a position");
  check_usage(config.positional != PositionalEncoding::Rope || config.head_size() % 2 == 0,
              "with --positional rope the head size must be even (RoPE turns pairs of channels), but ", head_size);
  return config;
}

std::string count_of(int64_t count, const char* noun) {
  return std::to_string(count) + " " + noun + (count == 1 ? "" : "s");
}

// "cpu-small", or "cpu-small changed by --layers, --dims" when flags changed the preset (the
// values follow on the same line, once).
std::string model_description(const CLI::App& command, const GPTConfig& config) {
  std::string text = config.preset;
  int changes = 0;
  for (const std::string& flag : model_flags())
    if (flag != "--config" && command.count(flag)) text += (changes++ == 0 ? " changed by " : ", ") + flag;
  return text;
}

// Whether a fixed flag given to a resumed run says what the checkpoint already holds (then it changes nothing).
bool flag_keeps_checkpoint_value(const std::string& flag, const TrainArguments& arguments,
                                 const CheckpointHeader& header) {
  const GPTConfig& config = header.config;
  if (flag == "--config") return arguments.preset == config.preset;
  if (flag == "--layers") return arguments.layers == config.n_layer;
  if (flag == "--heads") return arguments.heads == config.n_head;
  if (flag == "--dims") return arguments.dims == config.n_embd;
  if (flag == "--block-size") return arguments.block_size == config.block_size;
  if (flag == "--batch-size") return arguments.batch_size == config.batch_size;
  if (flag == "--dropout") return arguments.dropout == config.dropout;
  if (flag == "--positional") return arguments.positional == positional_encoding_name(config.positional);
  if (flag == "--seed") return arguments.settings.seed == header.settings.seed;
  if (block_flag_keeps(flag, arguments.block, config)) return true;
  return false;  // --init-from: a resumed run starts from nothing else
}

// A resumed run keeps the checkpoint's settings except those given on the command line;
// a new --lr brings its own --min-lr (lr / 10) unless that is given too.
void apply_training_overrides(const CLI::App& command, const TrainArguments& arguments, TrainSettings& settings) {
  for (const TrainSetting& setting : kTrainSettings) {
    if (setting.help && setting.resumable && command.count(flag_of(setting)))  // a setting with a flag
      std::visit([&](auto member) { settings.*member = arguments.settings.*member; }, setting.member);
  }
  if (command.count("--lr") && !command.count("--min-lr")) settings.min_lr = -1;
  if (command.count("--dtype")) settings.bf16_matmul = arguments.dtype == "bf16";  // else the run's own
  validate_flags(settings);
  settings.resolve_defaults();
}

// The settings of a new run: the flags, with the peak lr of the model's preset unless --lr is given
// (a twentieth of it when fine-tuning every weight, as nanoGPT's 3e-5 for GPT-2 124M).
TrainSettings new_run_settings(const CLI::App& command, const TrainArguments& arguments, const GPTConfig& model,
                               bool fine_tuning) {
  TrainSettings settings = arguments.settings;
  if (!command.count("--lr"))  // LoRA's adapters start at zero and take the preset's own rate
    settings.lr = model.preset_learning_rate() / (fine_tuning && settings.lora_rank == 0 ? 20 : 1);
  settings.bf16_matmul = arguments.dtype == "bf16";
  validate_flags(settings);
  settings.resolve_defaults();
  return settings;
}

// What changing --iters on resume does to the schedule, said before the run goes on: the cosine
// ends where it always did (--decay-iters), so a longer run holds min_lr from there.
void explain_schedule_change(std::ostream& out, const CLI::App& command, const TrainSettings& before,
                             const TrainSettings& after, int64_t step) {
  if (!command.count("--iters") || before.iters == after.iters) return;
  if (command.count("--decay-iters")) {
    out << "note: --decay-iters " << after.decay_iters << " moves the end of the cosine from step "
        << before.decay_iters << ": the learning rate at step " << step << " goes from " << before.lr_schedule().at(step)
        << " to " << after.lr_schedule().at(step) << "\n";
    return;
  }
  if (after.iters > after.decay_iters)
    out << "note: --iters " << after.iters << " runs past the end of this run's cosine at step " << after.decay_iters
        << ": from there the learning rate holds at --min-lr " << after.min_lr << " (give --decay-iters "
        << after.iters << " to stretch the cosine over the new length instead)\n";
  else
    out << "note: --iters " << after.iters << " ends the run before its cosine does (at step " << after.decay_iters
        << "): the learning rate will not have reached --min-lr " << after.min_lr << "\n";
}

std::string millions(int64_t count) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2fM", static_cast<double>(count) / 1e6);
  return text;
}

// The tokenizer --tokenizer names for a text file: char (built from the text itself), gpt2, a bpe-train DIR or a
// DIR holding a Hugging Face tokenizer.json.
std::optional<tokenizer::TextTokenizer> named_tokenizer(const TrainArguments& arguments) {
  namespace fs = std::filesystem;
  const std::string& name = arguments.tokenizer;
  if (name.empty() || name == "char") return std::nullopt;
  const std::string directory = name == "gpt2" ? (arguments.vocab.empty() ? default_gpt2_vocab_dir("train") : arguments.vocab)
                                               : name;
  check(fs::is_directory(directory), "train: --tokenizer ", name,
        " is neither char, gpt2 nor a directory (written by tinygpt bpe-train, or holding a tokenizer.json)");
  try {
    return tokenizer::load_tokenizer_directory(directory);
  } catch (const tokenizer::TokenizerError& error) {
    fail("train: --tokenizer ", name, ": ", error.what());
  }
}

// A file of conversations for chat SFT (datasets/conversation_file.h) rather than a text.
bool is_conversation_file(const std::string& path) {
  return path.ends_with(".jsonl") && !std::filesystem::is_directory(path);
}

// The files of a run's data: --data (or the corpus the run recorded) and, for conversations, --val-data.
struct DataFiles {
  std::string data;
  std::string val_data;
};

// What the run learns from. A text is tokenised in memory with --tokenizer, or,
// without it, with the tokenizer of the model the run continues (`model_tokenizer`),
// or character by character. A directory is a dataset from tinygpt prepare. A
// .jsonl file holds conversations, rendered with that tokenizer's chat template
// (or ChatML, character by character).
TrainingData training_data(const CLI::App& command, const TrainArguments& arguments, const DataFiles& paths,
                           const tokenizer::TextTokenizer* model_tokenizer, const std::string& model_words) {
  const std::string& path = paths.data;
  check(paths.val_data.empty() || is_conversation_file(path), "train: --val-data ", paths.val_data,
        " is for conversations (--data FILE.jsonl); a text's val split is its last 10%");
  if (std::filesystem::is_directory(path)) {
    check(!command.count("--tokenizer") && !command.count("--vocab"), "train: --data ", path,
          " is a prepared dataset, which carries its own tokenizer: drop --tokenizer/--vocab");
    return prepared_data(path);
  }
  check(arguments.vocab.empty() || arguments.tokenizer == "gpt2", "train: --vocab is for --tokenizer gpt2");
  std::optional<tokenizer::TextTokenizer> tokenizer = named_tokenizer(arguments);
  if (!tokenizer && model_tokenizer && !command.count("--tokenizer")) tokenizer = *model_tokenizer;
  if (is_conversation_file(path)) return conversation_data({path, paths.val_data, "train"}, tokenizer ? &*tokenizer : nullptr);
  const std::string text = read_text_file(path);
  const bool model_vocabulary = tokenizer && model_tokenizer && !command.count("--tokenizer");
  TrainingData data = [&] {
    if (!tokenizer) return char_level_data(text);
    try {
      return tokenized_text_data(text, std::move(*tokenizer));
    } catch (const Error& error) {
      // A char model cannot encode a character it never saw: say whose vocabulary it is.
      if (!model_vocabulary) throw;
      fail("train: --data ", path, " cannot be encoded with the vocabulary of ", model_words, ": ", error.what());
    }
  }();
  data.source = text_source(path, text);
  data.description = path + " (" + std::to_string(text.size()) + " bytes, " + data.tokenizer.kind() +
                     " tokenizer of " + std::to_string(data.tokenizer.vocab_size()) + " tokens, encoded in memory)";
  return data;
}

// --profile's table, or why there is none: the first step of a session is a warm-up, not profiled.
void print_profile(std::ostream& out, const ProfileRecord& profile) {
  if (profile.steps == 0) {
    out << "note: --profile skips the first step of a run (a warm-up), and this run had no other: nothing to show\n";
    return;
  }
  out << "\n";
  inspect::print_profile_table(out, profile, inspect::measure_sgemm(profile.largest_gemm));
}

// The model --init-from names: a Hugging Face model directory (GPT-2, the Llama family) or a tinygpt checkpoint
// (file or run directory).
LoadedModel initial_model(const TrainArguments& arguments) {
  ModelSourceArguments source;
  if (is_hf_model_directory(arguments.init_from)) {
    source.weights = arguments.init_from;
  } else {
    source.checkpoint = arguments.init_from;
  }
  LoadedModel loaded = load_model(source, "train --init-from");
  check(loaded.model->weight_format() == DType::Float32, "train --init-from: ", arguments.init_from, " holds ",
        dtype_name(loaded.model->weight_format()), " weights (tinygpt quantize), which are for inference; ",
        "fine-tune from the float32 model");
  return loaded;
}

namespace fs = std::filesystem;

// A new run writes its checkpoints and log into --out: a directory that holds a run is
// kept unless --overwrite says to replace it; an existing --log file likewise.
void check_outputs_are_free(const TrainArguments& arguments, const std::string& metrics_path) {
  for (const char* name : {kLatestCheckpointFile, kBestCheckpointFile}) {
    const fs::path checkpoint = fs::path(arguments.out) / name;
    check_usage(arguments.overwrite || !fs::exists(checkpoint), "--out ", arguments.out, " already holds a run (",
                checkpoint.string(), "); continue it with --resume, or replace it with --overwrite");
  }
  std::error_code error;
  check_usage(arguments.overwrite || arguments.log.empty() || !fs::exists(arguments.log, error) ||
                  fs::file_size(arguments.log, error) == 0,
              "--log ", metrics_path, " already exists; give another file, or replace it with --overwrite");
}

// No output may land on an input or on another output: a log written over the corpus or a
// checkpoint would destroy it.
void check_outputs_apart(const TrainArguments& arguments, const std::string& data_path, const std::string& metrics_path) {
  const fs::path log = metrics_path;
  std::vector<std::pair<std::string, fs::path>> inputs = {
      {"--data", data_path},
      {"run's checkpoint", fs::path(arguments.out) / kLatestCheckpointFile},
      {"run's best checkpoint", fs::path(arguments.out) / kBestCheckpointFile}};
  if (!arguments.val_data.empty()) inputs.emplace_back("--val-data", arguments.val_data);
  check_output_is_no_input("--log", log, inputs);
  std::error_code error;
  if (fs::is_directory(data_path, error)) {
    const fs::path parent = fs::absolute(log, error).parent_path();
    check_usage(!same_file(parent, data_path), "--log ", metrics_path, " is inside the prepared dataset ", data_path,
                ", whose files the run reads; write the log elsewhere");
    check_usage(!same_file(arguments.out, data_path), "--out ", arguments.out, " is the prepared dataset --data ",
                data_path, "; write the run elsewhere");
  }
}

// --overwrite: the old run's files go before the new run writes its first, so nothing of it
// (a best.safetensors the new run never beats, a log's lines) survives to be taken for the new one's.
void remove_previous_run(const TrainArguments& arguments, const std::string& metrics_path, std::ostream& out) {
  int removed = 0;
  for (const fs::path& path : {fs::path(arguments.out) / kLatestCheckpointFile,
                              fs::path(arguments.out) / kBestCheckpointFile, fs::path(arguments.out) / kAdapterWeightsFile,
                              fs::path(arguments.out) / kAdapterConfigFile, fs::path(metrics_path)})
    removed += fs::remove(path) ? 1 : 0;
  if (removed > 0) out << "--overwrite: removed the previous run's files in " << arguments.out << "\n";
}

// Where a resumed run's data is: --data (and --val-data), else the paths its checkpoint records.
DataFiles resumed_data_files(const TrainArguments& arguments, const Checkpoint& checkpoint) {
  if (!arguments.data.empty()) return {arguments.data, arguments.val_data};
  check(checkpoint.header.data.has_value(), "train --resume: ", checkpoint.path,
        " does not record its data (an older tinygpt wrote it); give --data with the corpus the run trained on");
  const DataSource& recorded = *checkpoint.header.data;
  for (const std::string& path : {recorded.path, recorded.val_path})
    check(path.empty() || fs::exists(path), "train --resume: the run's data ", path,
          " is gone; give --data", recorded.val_path.empty() ? "" : " and --val-data",
          " with the same data where it now lies");
  return {recorded.path, arguments.val_data.empty() ? recorded.val_path : arguments.val_data};
}

// A resumed run continues on the data it trained on: other data (another file, or the file
// changed since) is refused unless --allow-new-data says so.
// Returns the note to print once the run has started, or "".
std::string check_resumed_data(const CLI::App& command, const TrainArguments& arguments, const Checkpoint& checkpoint,
                               const TrainingData& data) {
  const std::optional<DataSource>& recorded = checkpoint.header.data;
  if (!recorded)
    return "note: " + checkpoint.path + " does not record its data (an older tinygpt wrote it): --data " +
           arguments.data + " is taken as the run's own, unchecked\n";
  if (!data.source || recorded->same_data(*data.source)) return "";
  if (!arguments.allow_new_data) {
    if (command.count("--data"))
      check_usage(false, "--data ", arguments.data, " is not the data this run trained on (", recorded->description(),
                  "; this is ", data.source->description(), "); give that data, or add --allow-new-data to go on "
                  "with this one");
    check_usage(false, "the run's data ", recorded->path, " has changed since the run used it (then ",
                recorded->bytes, " ", recorded->kind == "text" ? "bytes" : "tokens", ", xxh3 ", recorded->xxh3,
                "; now ", data.source->bytes, ", xxh3 ", data.source->xxh3,
                "); give --data with the original, or add --allow-new-data to go on with it as it is");
  }
  return "note: --allow-new-data: the run goes on with " + data.source->description() + " in place of " +
         recorded->description() + ", on the same schedule; the best val loss so far is forgotten (the val " +
         "split is another), so the next evaluation writes best.safetensors anew\n";
}

// --threads, or in a job the cores mpirun bound this rank to.
void set_run_threads(const CLI::App& command, const TrainArguments& arguments, const dist::Communicator& job) {
  if (command.count("--threads")) {
    set_num_threads(arguments.threads);
  } else if (job.size() > 1) {
    // OpenMP's default follows the cores mpirun bound this rank to; OpenBLAS is told the same.
    set_num_threads(num_threads());
  }
}

// Flags that cannot go together, refused before anything is read.
void check_flag_combinations(const CLI::App& command, const TrainArguments& arguments) {
  validate_flags(arguments.settings);  // a value out of range is refused before --out is touched
  check_usage(!command.count("--lora-rank") || arguments.settings.lora_rank == 0 || !arguments.init_from.empty() ||
                  arguments.resume,
              "--lora-rank trains adapters on a trained model: give it with --init-from DIR");
  check_usage(!arguments.resume || arguments.init_from.empty(),
              "--resume continues the run in --out; --init-from starts a new one: give one of them");
  check_usage(!arguments.resume || !arguments.overwrite,
              "--resume continues the run in --out; --overwrite replaces it: give one of them");
  check_usage(arguments.resume || !arguments.allow_new_data,
              "--allow-new-data lets a resumed run change its data: it goes with --resume");
  if (!arguments.init_from.empty()) {
    for (const std::string& flag : architecture_flags()) {
      check(command.count(flag) == 0, "train --init-from: ", flag,
            " cannot be given: the model's shape comes from the model to start from (--block-size may shrink its "
            "context; --dropout and --batch-size apply)");
    }
  }
}

// A run about to train, and how the header names its model.
struct StartedRun {
  std::unique_ptr<TrainingRun> run;
  std::string model;
};

// What the three ways into a run (resume, fine-tune, new) are given.
struct RunRequest {
  const CLI::App& command;
  const TrainArguments& arguments;
  const std::string& metrics_path;
  dist::Communicator& job;
  std::ostream& out;
  // Held until the run ends, taken before anything in --out is written or said about the run.
  std::optional<RunDirectoryLock>& lock;

  void lock_out() const {
    if (job.is_root()) lock.emplace(arguments.out);
  }
};

// --resume: the checkpoint in --out, its settings with the flags given applied, on its own data.
StartedRun resume_run(const RunRequest& request) {
  const CLI::App& command = request.command;
  const TrainArguments& arguments = request.arguments;
  std::ostream& out = request.out;
  const std::string latest = (fs::path(arguments.out) / kLatestCheckpointFile).string();
  check(fs::is_regular_file(latest), "train --resume: no checkpoint at '", latest,
        "' (train into --out ", arguments.out, " first)");
  request.lock_out();
  const Checkpoint checkpoint = load_checkpoint(latest);
  for (const std::string& flag : fixed_flags()) {
    check_usage(command.count(flag) == 0 || flag_keeps_checkpoint_value(flag, arguments, checkpoint.header), flag,
                " cannot change in a resumed run (it continues with the checkpoint's model, data and seed)");
  }
  TrainSettings settings = checkpoint.header.settings;
  apply_training_overrides(command, arguments, settings);
  const DataFiles data_files = resumed_data_files(arguments, checkpoint);
  check_outputs_apart(arguments, data_files.data, request.metrics_path);
  const tokenizer::TextTokenizer model_tokenizer = tokenizer::TextTokenizer::from_json(checkpoint.header.tokenizer);
  TrainingData data = training_data(command, arguments, data_files, &model_tokenizer, "the resumed run's model");
  const std::string data_note = check_resumed_data(command, arguments, checkpoint, data);
  StartedRun started{TrainingRun::resume(checkpoint, std::move(data), settings, request.job),
                     checkpoint.header.config.preset};
  out << data_note;
  explain_schedule_change(out, command, checkpoint.header.settings, settings, checkpoint.header.step);
  out << "resuming " << latest << " at step " << checkpoint.header.step << "\n";
  if (checkpoint.header.ranks() != request.job.size())
    out << "note: the checkpoint was written by a job of " << count_of(checkpoint.header.ranks(), "rank")
        << ", this one has " << request.job.size() << ": every rank draws its batches from a fresh stream from here "
        << "on, so the run continues correctly but not as the first job would have\n";
  return started;
}

// A new run's data path (--data, else tiny Shakespeare), once no output lands on it, --out holds
// no run it would replace, and --out is locked.
std::string claim_outputs_of_new_run(const RunRequest& request) {
  const TrainArguments& arguments = request.arguments;
  const std::string data_path = arguments.data.empty() ? default_corpus_path("train") : arguments.data;
  check_outputs_apart(arguments, data_path, request.metrics_path);
  check_outputs_are_free(arguments, request.metrics_path);
  request.lock_out();
  return data_path;
}

// --init-from: a new run from another model's weights (fine-tuning).
StartedRun fine_tune_run(const RunRequest& request) {
  const CLI::App& command = request.command;
  const TrainArguments& arguments = request.arguments;
  const std::string data_path = claim_outputs_of_new_run(request);
  LoadedModel initial = initial_model(arguments);
  GPTConfig config = initial.model->config();
  TrainSettings settings = new_run_settings(command, arguments, config, /*fine_tuning=*/true);
  settings.init_from = arguments.init_from;
  apply_run_overrides(command, arguments, config);
  TrainingData data = training_data(command, arguments, {data_path, arguments.val_data}, &*initial.tokenizer,
                                    "the --init-from model");
  return {TrainingRun::start_from(std::move(initial.model), *initial.tokenizer, std::move(data), config, settings,
                                  request.job),
          "from " + initial.description};
}

// A new run from fresh weights, of the model the flags describe.
StartedRun new_run(const RunRequest& request, const GPTConfig& requested_config) {
  const CLI::App& command = request.command;
  const TrainArguments& arguments = request.arguments;
  const std::string data_path = claim_outputs_of_new_run(request);
  const TrainSettings settings = new_run_settings(command, arguments, requested_config, false);
  StartedRun started{TrainingRun::start(training_data(command, arguments, {data_path, arguments.val_data}, nullptr, ""),
                                        requested_config, settings, request.job),
                     ""};
  started.model = model_description(command, started.run->state().config);
  return started;
}

// --checkpoint-activations and the products' dtype on the model; whether they run in bfloat16.
bool apply_model_options(TrainingRun& run, const TrainArguments& arguments, std::ostream& out) {
  run.model().set_activation_checkpointing(arguments.checkpoint_activations);
  const bool bf16 = run.state().settings.bf16_matmul == 1;
  if (bf16) {
    run.model().set_matmul_dtype(DType::BFloat16);
    if (cpu::bf16_gemm_kernel() != cpu::Bf16GemmKernel::avx512_bf16)
      out << "note: --dtype bf16 on a CPU without AVX512-BF16 (or with TINYGPT_ISA=avx2): the bfloat16 products run "
             "widened to float32, slower than --dtype float32; only the activation memory is saved\n";
  }
  return bf16;
}

// "cosine to 1e-4", "constant, then linear to 1e-4 from step 800".
std::string schedule_summary(const TrainSettings& settings) {
  std::ostringstream text;
  if (settings.schedule == "wsd")
    text << "constant, then linear to " << settings.min_lr << " from step " << settings.lr_schedule().cooldown_start();
  else
    text << "cosine to " << settings.min_lr;
  return text.str();
}

// How conversations become batches, and what that costs: the header's second data line.
void print_conversations_header(std::ostream& out, const ConversationSplits& conversations, const GPTConfig& config,
                                const TrainSettings& settings) {
  const ConversationSplit* splits[2] = {&conversations.train, &conversations.val};
  out << "conversations:";
  for (const ConversationSplit* split : splits) {
    const ConversationFit fit = split->fit(config.block_size);
    out << (split == splits[0] ? " " : "; ") << split->name() << " " << count_of(split->size(), "conversation") << " ("
        << fit.assistant_targets << " assistant tokens within the block)";
    if (fit.cut > 0) out << ", " << fit.cut << " longer than the block of " << config.block_size << ": cut to it";
    if (fit.left_out > 0) out << ", " << fit.left_out << " with no assistant token within it: left out";
  }
  char padding[32];
  std::snprintf(padding, sizeof padding, "%.1f%%",
                100 * conversations.train.padding_fraction(config.batch_size, config.block_size, Generator(settings.seed)));
  out << "\nbatches: one conversation a row, padded to the longest of its micro-batch, grouped by length: " << padding
      << " of the positions computed are padding (an epoch's); the loss is on the assistant's tokens only\n";
}

// What the run is, before its first step: threads, data, model and schedule.
void print_run_header(std::ostream& out, StartedRun& started, const TrainArguments& arguments, bool bf16,
                      const dist::Communicator& job) {
  const std::string& model = started.model;
  const GPTConfig& config = started.run->state().config;
  const TrainSettings& settings = started.run->state().settings;
  const TrainingData& data = started.run->data();
  const int64_t tokens_per_step = config.batch_size * config.block_size * settings.grad_accum * job.size();
  out << "threads: " << thread_info() << (job.size() > 1 ? " per rank" : "") << "\n";
  if (job.size() > 1) out << "data parallel: " << job.description() << ", each training on its own batches\n";
  out << "data: " << data.description << "; train " << data.splits.train.size() << " tokens, val "
      << data.splits.val.size() << "\n";
  if (data.conversations) print_conversations_header(out, *data.conversations, config, settings);
  out
      << "model: " << model << (model == config.preset ? ", " : ": ") << count_of(config.n_layer, "layer") << ", " << count_of(config.n_head, "head") << ", "
            << config.n_embd << " channels, block " << config.block_size << ", vocabulary " << config.vocab_size << ", "
            << positional_encoding_name(config.positional) << " positions" << block_summary(config) << ", dropout "
            << config.dropout << ", "
            << millions(started.run->model().parameter_count()) << " parameters\n"
            << "training: " << settings.iters << " steps of "
            << (job.size() > 1 ? std::to_string(job.size()) + " ranks x " : std::string())
            << (settings.grad_accum > 1 ? std::to_string(settings.grad_accum) + " x " : std::string())
            << config.batch_size << " x " << config.block_size << " = " << tokens_per_step
            << " tokens, lr " << settings.lr << " (warmup " << settings.warmup << ", " << schedule_summary(settings)
            << (settings.decay_iters != settings.iters ? " at step " + std::to_string(settings.decay_iters) + ", then held"
                                                       : std::string())
            << "), weight decay " << settings.weight_decay << ", grad clip " << settings.grad_clip << ", seed "
            << settings.seed << (arguments.checkpoint_activations ? ", activation checkpointing" : "")
            << (bf16 ? ", bf16 matrix products (mixed precision)" : "") << "\n"
      << "optimizer: " << describe_optimizer(started.run->optimizer()) << "\n";
  if (const std::optional<LoraConfig>& lora = started.run->model().lora()) {
    int64_t trained = 0;
    for (const auto& [name, parameter] : started.run->model().named_parameters()) trained += parameter.requires_grad() ? parameter.numel() : 0;
    out << "lora: rank " << lora->settings.rank << ", alpha " << lora->settings.alpha << " (update scaled by "
        << lora->settings.alpha / static_cast<double>(lora->settings.rank) << "), dropout " << lora->settings.dropout
        << ", on " << describe_lora_targets(lora->targets) << " of every layer: " << trained
        << " adapter parameters trained, the model's " << started.run->model().parameter_count() - trained
        << " frozen" << (settings.lora_base == "float32" ? "" : " in " + settings.lora_base + " (QLoRA)") << "; adapters saved to " << arguments.out << "/" << kAdapterWeightsFile << " (PEFT's layout)\n";
  }
  if (settings.target_loss > 0 || settings.eval_whole_val == 1) {
    out << "evaluation: every " << settings.eval_interval << " steps, "
        << (settings.eval_whole_val == 1 ? "val loss over the whole val split"
                                         : "val loss over " + std::to_string(settings.eval_iters) + " batches");
    if (settings.target_loss > 0) out << "; stops when it reaches " << settings.target_loss;
    out << "\n";
  }
  if (settings.warmup > settings.decay_iters)
    out << "note: --warmup " << settings.warmup << " is longer than the schedule, which ends at step "
        << settings.decay_iters << ": the learning rate warms up over all " << settings.decay_iters
        << " steps and never decays\n";
}

// Trains to the last step or to Ctrl-C / SIGTERM (which saves, then ends the program with
// StoppedBySignal), and says how it ended.
void train_to_the_end(TrainingRun& run, const TrainArguments& arguments, const std::string& metrics_path,
                      const dist::Communicator& job, std::ostream& out) {
  const TrainSettings& settings = run.state().settings;
  TrainOutputs outputs;
  outputs.out_dir = arguments.out;
  outputs.metrics_path = metrics_path;
  outputs.progress_is_terminal = isatty(STDERR_FILENO) == 1;
  outputs.profile = arguments.profile;
  const StopOnSignals stop_signals;
  outputs.stop_requested = &stop_signals.requested();
  const auto started = std::chrono::steady_clock::now();
  const TrainResult result = run.train(outputs, out);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
  if (result.interrupted) {
    out << "stopped by " << stop_signals.signal_name() << " at step " << result.steps << " of " << settings.iters;
    if (result.saved_at_stop)
      out << "; " << (fs::path(arguments.out) / kLatestCheckpointFile).string() << " holds it. Continue with: tinygpt "
          << "train --out " << arguments.out << (arguments.log.empty() ? "" : " --log " + arguments.log) << " --resume\n";
    else
      out << "; no step was taken, so nothing was saved\n";
    throw StoppedBySignal{stop_signals.signal_number()};
  }
  char summary[200];
  std::snprintf(summary, sizeof summary, "done: step %lld in %.1f s%s; best val loss %.4f (perplexity %.2f)",
                static_cast<long long>(result.steps), elapsed.count(),
                result.reached_target ? ", the target val loss reached" : "", result.best_val_loss,
                std::exp(result.best_val_loss));
  out << summary << "\n";
  if (arguments.profile && job.is_root()) print_profile(out, result.profile);
}

void run_train(const CLI::App& command, const TrainArguments& arguments) {
  dist::Communicator& job = dist::join_job();  // one rank of an mpirun job, or a single process
  std::ostream discarded(nullptr);
  std::ostream& out = job.is_root() ? std::cerr : discarded;  // rank 0 alone speaks
  set_run_threads(command, arguments, job);
  check_flag_combinations(command, arguments);
  // The flags are checked before the corpus is looked for and read.
  const GPTConfig requested_config = arguments.init_from.empty() ? model_config(command, arguments) : GPTConfig();
  const std::string metrics_path =
      arguments.log.empty() ? (fs::path(arguments.out) / "metrics.jsonl").string() : arguments.log;

  std::optional<RunDirectoryLock> lock;
  const RunRequest request{command, arguments, metrics_path, job, out, lock};
  StartedRun started = arguments.resume              ? resume_run(request)
                       : !arguments.init_from.empty() ? fine_tune_run(request)
                                                      : new_run(request, requested_config);
  const bool bf16 = apply_model_options(*started.run, arguments, out);
  print_run_header(out, started, arguments, bf16, job);
  if (arguments.overwrite && job.is_root()) remove_previous_run(arguments, metrics_path, out);
  train_to_the_end(*started.run, arguments, metrics_path, job, out);
}

}  // namespace

void add_train_command(CLI::App& app) {
  auto arguments = std::make_shared<TrainArguments>();
  CLI::App* command = app.add_subcommand("train", "Train a GPT (from scratch or from weights) on a text or a prepared dataset");
  TrainSettings& settings = arguments->settings;
  command->add_option("--data", arguments->data,
                      "A text file, or a dataset DIR from tinygpt prepare (default: tiny Shakespeare, see scripts/data.sh)");
  command->add_option("--val-data", arguments->val_data,
                      "With --data FILE.jsonl (conversations): the val conversations (default: the last 10% of --data's)");
  command->add_option("--tokenizer", arguments->tokenizer,
                      "How a text --data is tokenised: char (its characters), gpt2, or a DIR from tinygpt bpe-train or with a "
                      "Hugging Face tokenizer.json "
                      "(default: char, or the tokenizer of the model --resume/--init-from continues)");
  command->add_option("--vocab", arguments->vocab, "GPT-2's BPE files for --tokenizer gpt2 (default: ../shared/data/gpt2)");
  command->add_option("--init-from", arguments->init_from,
                      "Start from these weights (fine-tuning): a Hugging Face model DIR (GPT-2, Llama, Mistral, Qwen) or a tinygpt checkpoint");
  command->add_option("--config", arguments->preset, "Model preset: cpu-small, baby, gpt2, ...")->capture_default_str();
  command->add_option("--out", arguments->out, "Directory for model.safetensors, best.safetensors, metrics.jsonl")
      ->capture_default_str();
  command->add_flag("--resume", arguments->resume,
                    "Continue the run saved in --out DIR/model.safetensors, on the data its checkpoint records");
  command->add_flag("--overwrite", arguments->overwrite,
                    "Start a new run in an --out DIR that holds one, removing its checkpoints and log");
  command->add_flag("--allow-new-data", arguments->allow_new_data,
                    "With --resume: go on with other --data than the run trained on (same schedule; the best val "
                    "loss so far is forgotten)");
  add_config_file_option(*command, arguments->config_file);
  command->add_flag("--checkpoint-activations", arguments->checkpoint_activations,
                    "Keep only each block's input in the forward and recompute the rest in the backward: "
                    "less memory, more time, the same numbers");
  command->add_option("--dtype", arguments->dtype,
                      "bf16: mixed precision, the matrix products in bfloat16 with float32 sums and float32 weights "
                      "and optimiser (AVX512-BF16 where the CPU has it); a resumed run keeps its own unless given")
      ->check(CLI::IsMember({"float32", "bf16"}))
      ->capture_default_str();
  command->add_flag("--profile", arguments->profile,
                    "Time every op family of each step after the first and print a table at the end: ms per step, "
                    "share, GFLOP/s or GB/s, and the step against its GEMM bound (docs/training.md)");
  command->add_option("--log", arguments->log, "JSON Lines metrics file (default: DIR/metrics.jsonl)");
  command->add_option("--layers", arguments->layers, "Override the preset's number of layers (0: a bigram model)")
      ->check(non_negative_integer());
  command->add_option("--heads", arguments->heads, "Override the preset's attention heads")->check(positive_integer());
  command->add_option("--dims", arguments->dims, "Override the preset's channels (n_embd)")->check(positive_integer());
  command->add_option("--block-size", arguments->block_size, "Override the preset's context length")->check(positive_integer());
  command->add_option("--batch-size", arguments->batch_size, "Override the preset's batch size")->check(positive_integer());
  command->add_option("--dropout", arguments->dropout, "Override the preset's dropout")->check(fraction_below_one());
  command->add_option("--positional", arguments->positional, "Positional encoding")
      ->check(CLI::IsMember({"learned", "sinusoidal", "rope"}));
  add_block_flags(*command, arguments->block);
  for (const TrainSetting& setting : kTrainSettings) {
    if (!setting.help) continue;
    const auto add = [&](auto member) { return command->add_option(flag_of(setting), settings.*member, setting.help); };
    CLI::Option* option = std::visit(add, setting.member);
    // The lr comes from the preset, min_lr and decay_iters from other flags: their help says so.
    const std::string key = setting.key;
    if (key != "lr" && key != "min_lr" && key != "decay_iters") option->capture_default_str();
  }
  command->add_option("--threads", arguments->threads, "Threads for OpenMP and OpenBLAS")->check(positive_integer());
  command->footer(dist::built_with_mpi()
                      ? "Data parallel: mpirun -np N tinygpt train ... trains on N processes (ranks), each with "
                        "--batch-size x --grad-accum windows per step; add --hostfile FILE for several machines "
                        "(this build: " + dist::mpi_library_version() + "; README.md, docs/distributed.md)"
                      : std::string("Data parallel: not in this build (it was configured without MPI; bash "
                                    "scripts/setup.sh installs Open MPI, then rebuild)"));
  command->callback([command, arguments] {
    apply_config_file(*command, arguments->config_file);
    run_train(*command, *arguments);
  });
}

}  // namespace tg::cli
