// Checkpoints: one safetensors file holding everything needed to sample from a
// model or to resume its training exactly where it stopped.
//
// Tensors (float32, but for the weights of a quantized model):
//   <name>               every model parameter, under GPT::named_parameters()'s name;
//                        a quantized model's weight matrices in bfloat16 or int8, and
//                        for int8 their scales as <name>_scale (nn/quantize.h)
//   optimizer.m.<name>   AdamW's first moment for that parameter       } training checkpoints
//   optimizer.v.<name>   AdamW's second moment                          } only: AdamW's for
//   optimizer.momentum.<name>  Muon's momentum, for the matrices Muon   } the parameters it
//                        updates (--optimizer muon)                     } updates, Muon's for its
// Metadata (strings):
//   format         "tinygpt-checkpoint-v1" (a file without it is not ours)
//   config         GPTConfig as JSON
//   tokenizer      the whole tokenizer as JSON (TextTokenizer::to_json): {"type": "char", "characters":
//                  "\n !$&..."} (the vocabulary in id order) or {"type": "bpe", "encoder.json": "...",
//                  "vocab.bpe": "..."} (the two files' texts), so no file beside the checkpoint is needed
//   training       TrainSettings as JSON
//   step           optimiser steps taken
//   optimizer      "adamw" or "muon" (state present, nn/optim/optimizer.h) or "none" (weights only)
//   optimizer_step AdamW's own step count (for its bias correction)
//   data_generator, dropout_generator   {"seed": s, "counter": c} of each Generator (rank 0's in a
//                  data-parallel job)
//   other_ranks    only from a job of N > 1 ranks (distributed/): the same two generators of ranks
//                  1 .. N-1, [{"data": {...}, "dropout": {...}}, ...], so a job of N ranks resumes exactly
//   best_val_loss  the lowest validation loss so far ("inf" before the first evaluation)
//   weights        "float32", or "bfloat16" / "int8" for a quantized model (tinygpt quantize);
//                  absent in older files, which are float32
//   data           the run's data: DataSource as JSON (datasets/data_source.h); absent in older
//                  files and for data made in memory
//
// A training run writes DIR/model.safetensors (the latest state, with the
// optimiser: --resume reads it) and DIR/best.safetensors (weights at the lowest
// validation loss, without the optimiser: what `tinygpt sample --ckpt DIR` reads).
// Both are written atomically (temporary file + rename), so an interrupted run
// leaves the previous file whole.
#pragma once
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tinygpt/datasets/data_source.h"
#include "tinygpt/models/gpt_config.h"
#include "tinygpt/training/train_settings.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/io/safetensors.h"

namespace tg {

// Saving and restoring take the model and the optimiser by reference: an includer that
// only reads a checkpoint's header or weights does not compile the layers or AdamW.
class GPT;
namespace nn {
class Optimizer;
}  // namespace nn

inline constexpr const char* kCheckpointFormat = "tinygpt-checkpoint-v1";
inline constexpr const char* kLatestCheckpointFile = "model.safetensors";
inline constexpr const char* kBestCheckpointFile = "best.safetensors";

struct GeneratorState {
  uint64_t seed = 0, counter = 0;
  static GeneratorState of(const Generator& generator) { return {generator.seed(), generator.counter()}; }
  void restore(Generator& generator) const { generator.set_state(seed, counter); }
};

// The generators of one rank of a data-parallel job.
struct RankGenerators {
  GeneratorState data, dropout;
};

// Everything in a checkpoint besides the tensors.
struct CheckpointHeader {
  GPTConfig config;
  nlohmann::json tokenizer;  // TextTokenizer::to_json(), validated on load
  TrainSettings settings;
  int64_t step = 0;
  GeneratorState data_generator, dropout_generator;  // rank 0's
  std::vector<RankGenerators> other_ranks;           // ranks 1 .. N-1 of a job of N ranks
  int64_t ranks() const { return 1 + static_cast<int64_t>(other_ranks.size()); }
  double best_val_loss = std::numeric_limits<double>::infinity();
  DType weights = DType::Float32;  // the format of the weight matrices (GPT::weight_format)
  std::optional<DataSource> data;  // what the run trained on, when known
};

// Writes the model's parameters (and the optimiser's state when `optimizer` is
// given) with `header` to `path`; header.weights is taken from the model. Atomically (tensor/io/atomic_file.h: a temporary
// file, fsync, rename).
void save_checkpoint(const std::string& path, const CheckpointHeader& header, const GPT& model,
                     const nn::Optimizer* optimizer = nullptr);

struct Checkpoint {
  std::string path;
  CheckpointHeader header;
  bool has_optimizer_state = false;
  std::string optimizer;  // "adamw", "muon" or "none"
  int64_t optimizer_step = 0;
  SafetensorsFile file;
};

// Memory-maps the checkpoint (so what needs only the weights never reads the optimiser's
// moments from disk) and validates its metadata (format, config, tokenizer, training
// state). `file_or_run` is a checkpoint file or a run's directory, of which it reads
// what find_checkpoint_for_sampling picks (best.safetensors, else model.safetensors),
// as `tinygpt sample --ckpt DIR` does. Throws tg::Error naming the path and the
// problem: not a tinygpt checkpoint, a bad config, a missing key, ...
Checkpoint load_checkpoint(const std::string& file_or_run);

// Copies the checkpoint's parameters into `model` (built from header.config, in
// float32); a checkpoint of bfloat16 or int8 weights quantizes the model to that
// format first, and a LoRA run's (settings.lora_rank > 0) attaches its adapters
// (the frozen base and the adapters are both in the file). Throws naming the tensor when one is missing, unexpected or of
// the wrong shape or dtype, or when an int8 scale is not a finite number >= 0.
void restore_parameters(const Checkpoint& checkpoint, GPT& model);

// Copies the saved state and step into `optimizer`, tensor by tensor under the
// names its state_tensors() gives. Throws when the checkpoint has no optimiser
// state, another optimiser's, or a state tensor missing or misshapen.
void restore_optimizer(const Checkpoint& checkpoint, nn::Optimizer& optimizer);

// `path` itself when it is a file; for a directory, DIR/best.safetensors when it
// exists, else DIR/model.safetensors. Throws when neither exists.
std::string find_checkpoint_for_sampling(const std::string& path);

}  // namespace tg
