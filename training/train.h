// The training loop: batches from the corpus, forward, backward, clip, AdamW,
// with evaluations, checkpoints, a progress line and a metrics log.
//
// One step (the order matters for reproducibility):
//   1. for each of grad_accum micro-batches: draw B random windows from the
//      train split (the data generator), loss = model.loss(inputs, targets) (a
//      NaN or infinite loss stops the run), backward of loss / grad_accum into
//      the gradient arena, which sums them: the gradient of the mean loss over
//      all grad_accum x B windows, as one batch of that size would give
//   2. clip the global gradient norm to grad_clip
//   3. AdamW with the scheduled learning rate of this step (nn/optim/schedule.h)
// On conversation data (chat SFT, datasets/conversation_split.h) a micro-batch is
// B whole conversations, one a row, padded to the longest, and the loss is the
// mean over their assistant tokens; its evaluation scores every assistant token
// of the val split and of a fixed sample of train conversations, each once.
// Every eval_interval steps, at step 0 and at the end, the loss is estimated on
// eval_iters batches of each split (a separate generator, reset each time, so
// every evaluation sees the same batches and does not disturb the training
// batches), and the checkpoints are written: DIR/model.safetensors (the latest
// state, with the optimiser) and, when the validation loss is the lowest so far,
// DIR/best.safetensors (weights only). See training/checkpoint.h.
//
// Data parallel (distributed/, docs/distributed.md): in a job of N ranks every
// rank holds the whole model and runs step 1 on batches from its own data
// generator, seeded by (seed, rank); the ranks then agree on the loss (a NaN on
// any rank stops them all) and all-reduce the gradient arena to the mean over
// ranks, so steps 2 and 3 are identical everywhere and the weights stay equal
// without being sent (a checksum compares them at every evaluation). With B per
// rank the step is the step of one batch of N x B. Evaluation is shared out
// (batch i on rank i mod N, the same batches a single process evaluates) and
// summed. Rank 0 alone logs and writes the checkpoints, which carry every rank's
// generators. The batch size, grad_accum and tokens/step in the settings are
// per rank.
//
// Reproducibility: the run is a pure function of (data, initial weights,
// config, settings, thread count, number of ranks). A run resumed from DIR/model.safetensors restores the weights,
// AdamW's moments and step, the data and dropout generators and the step count,
// so it continues with exactly the losses the uninterrupted run would have had
// (with a different number of ranks, every rank's data generator starts afresh
// from (seed, rank, step): the run goes on correctly but not identically).
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "tinygpt/datasets/data.h"
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/distributed/communicator.h"
#include "tinygpt/models/gpt_config.h"
#include "tinygpt/nn/optim/schedule.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/profile.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/train_settings.h"

namespace tg {

// A run holds its model, gradient arena and optimiser by pointer, so that an includer (the
// CLI's train command, a test) sees the run's interface, not the layers' and AdamW's
// definitions; train.cpp includes them.
class GPT;
namespace nn {
class Optimizer;
class ParameterArena;
}  // namespace nn

struct TrainOutputs {
  std::string out_dir;          // checkpoints go here (created if missing)
  std::string metrics_path;     // the JSON Lines metrics log; empty = none
  bool progress_is_terminal = false;  // rewrite the progress line in place
  // Stop after this many steps in total, writing DIR/model.safetensors, as if the
  // run had been interrupted there (-1: run to settings.iters). Tests use it.
  int64_t stop_after = -1;
  // Profile every step of this session but the first, a warm-up (tensor/runtime/profile.h):
  // TrainResult::profile. Evaluations and checkpoints are not part of a step.
  bool profile = false;
  // Set (by a signal handler) to ask the run to stop: it ends the step under way (or the
  // evaluation, in a single process), writes DIR/model.safetensors and returns with
  // TrainResult::interrupted. In a job every rank's flag is summed at each step, so the
  // ranks stop together when any of them is asked to. nullptr: never asked.
  const std::atomic<bool>* stop_requested = nullptr;
};

struct TrainResult {
  int64_t steps = 0;                // optimiser steps taken, over every session of the run
  std::vector<double> step_losses;  // the training loss of each step of this session
  double best_val_loss = 0;
  double last_val_loss = 0;         // of the last evaluation (NaN if there was none in this session)
  ProfileRecord profile;            // with TrainOutputs::profile; no steps without it
  bool interrupted = false;         // TrainOutputs::stop_requested ended it before settings.iters
  bool reached_target = false;      // an evaluation's val loss reached settings.target_loss: the run stopped there
  bool saved_at_stop = false;       // and DIR/model.safetensors holds the step it stopped at
};

struct Evaluation {
  double train_loss = 0, val_loss = 0;  // mean loss over eval_iters batches of each split
  bool interrupted = false;             // stopped between batches (the losses are then meaningless)
};

// Called after each batch of an evaluation: batches of each split done, of how many.
using EvaluationProgress = std::function<void(int64_t batches_done, int64_t batches)>;

class TrainingRun {
 public:
  // A new run from random weights; config.vocab_size is set from the data's tokenizer.
  // Every factory takes the job the run is one rank of (distributed/communicator.h);
  // every rank of it must be given the same arguments (checked: else tg::Error).
  static std::unique_ptr<TrainingRun> start(TrainingData data, GPTConfig config, const TrainSettings& settings,
                                            dist::Communicator& job = dist::single_process());
  // A new run that starts from the weights of `initial` (fine-tuning), whose
  // tokenizer is `initial_tokenizer`: it must be the data's (else tg::Error).
  // `config` is initial's, with the training options a run may change: dropout,
  // batch size, and a block size no larger (the position table is cropped).
  static std::unique_ptr<TrainingRun> start_from(const GPT& initial, const tokenizer::TextTokenizer& initial_tokenizer,
                                                 TrainingData data, GPTConfig config, const TrainSettings& settings,
                                                 dist::Communicator& job = dist::single_process());
  // The same, taking the model itself: when `config` differs from its own in the
  // batch size at most, the run trains these very weights instead of a copy, so the
  // two never sit in memory together (a LoRA run's weights are most of its memory).
  static std::unique_ptr<TrainingRun> start_from(std::unique_ptr<GPT> initial,
                                                 const tokenizer::TextTokenizer& initial_tokenizer, TrainingData data,
                                                 GPTConfig config, const TrainSettings& settings,
                                                 dist::Communicator& job = dist::single_process());
  // Continues the run saved in `checkpoint` (one with optimiser state, e.g. DIR/model.safetensors),
  // with `settings` (normally the checkpoint's own; more iters extend the run). The
  // data must be tokenised with the checkpoint's tokenizer (else tg::Error).
  static std::unique_ptr<TrainingRun> resume(const Checkpoint& checkpoint, TrainingData data,
                                             const TrainSettings& settings,
                                             dist::Communicator& job = dist::single_process());

  // Makes one process draw each micro-batch as `ranks` equal slices, from the
  // data generators ranks 0 .. ranks-1 of a job would use: the windows a job of
  // that many ranks sees in total. With dropout 0 the run then takes the same
  // steps as the job (to rounding): how tests check data parallelism against a
  // single process, and a way to replay a job's run on one machine. The batch
  // size must divide by `ranks`; call before training, in a single process.
  void draw_batches_as_ranks(int ranks);

  // Trains until settings.iters steps (or outputs.stop_after). Progress lines go to `progress`
  // (rank 0's; the other ranks of a job print nothing).
  // Throws tg::Error naming the step when the loss is not finite.
  TrainResult train(const TrainOutputs& outputs, std::ostream& progress);

  // The mean loss over eval_iters batches of each split; on conversation data the
  // mean over the assistant's tokens of the whole val split and of a fixed sample
  // of eval_iters x B train conversations. In a job of several
  // ranks every rank must call it (each evaluates its share; the sums are all-reduced).
  Evaluation evaluate(const EvaluationProgress& progress = {});
  dist::Communicator& job() const { return job_; }
  GPT& model() { return *model_; }
  const CheckpointHeader& state() const { return header_; }
  const TrainingData& data() const { return data_; }

  const nn::Optimizer& optimizer() const { return *optimizer_; }

  ~TrainingRun();  // in train.cpp, where GPT, ParameterArena and the optimiser are complete

 private:
  TrainingRun(CheckpointHeader header, TrainingData data, dist::Communicator& job);
  static void check_fine_tuning(const GPT& initial, const tokenizer::TextTokenizer& initial_tokenizer,
                                const TrainingData& data, const GPTConfig& config);
  // The run of start_from on its model (`config`: the header's, when not the model's own).
  static std::unique_ptr<TrainingRun> fine_tune(std::unique_ptr<GPT> model,
                                                const tokenizer::TextTokenizer& initial_tokenizer, TrainingData data,
                                                const TrainSettings& settings, dist::Communicator& job,
                                                std::optional<GPTConfig> config = std::nullopt);
  void create_optimizer();
  void seed_rank_generators();            // this rank's data and dropout streams of a new run
  void restore_rank_generators();         // from header_ (resume)
  void check_ranks_agree() const;         // same settings, model and data on every rank
  void check_replicas_agree() const;      // the same weights on every rank
  Batch next_micro_batch();
  Evaluation evaluate_conversations(const EvaluationProgress& progress);  // evaluate() on conversation data
  double train_step();  // returns the loss (the mean over the ranks); advances header_.step
  void save(const std::string& path, bool with_optimizer);  // every rank calls it; rank 0 writes

  CheckpointHeader header_;  // config, vocabulary, settings, step, generators, best val loss
  TrainingData data_;
  std::unique_ptr<GPT> model_;
  std::unique_ptr<nn::ParameterArena> arena_;
  std::unique_ptr<nn::Optimizer> optimizer_;
  nn::LearningRateSchedule schedule_;
  dist::Communicator& job_;
  // This rank's data stream (draw_batches_as_ranks: one per simulated rank).
  std::vector<Generator> data_generators_;
  double last_grad_norm_ = 0;
  double last_all_reduce_seconds_ = 0;
  const std::atomic<bool>* stop_requested_ = nullptr;  // TrainOutputs::stop_requested of the running train()
  bool job_stop_agreed_ = false;  // some rank was asked to stop during the last step: all stop after it
};

}  // namespace tg
