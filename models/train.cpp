#include "models/train.h"

#include <chrono>
#include <cmath>
#include <filesystem>
#include <limits>

#include "autograd/backward.h"
#include "autograd/grad_mode.h"
#include "models/train_log.h"
#include "nn/optim/clip.h"
#include "tensor/atomic_file.h"
#include "tokenizer/char_tokenizer.h"
#include "tokenizer/errors.h"

namespace tg {

namespace {

// The batches of a run come from generators seeded from the run's seed, each
// with its own offset so that they draw independent streams.
constexpr uint64_t kDataSeedOffset = 1;  // training batches
constexpr uint64_t kEvalSeedOffset = 2;  // evaluation batches (the same ones at every evaluation)

std::vector<int64_t> encode_corpus(const std::string& corpus, const std::string& vocabulary) {
  const auto tokenizer = tokenizer::CharTokenizer::deserialize(vocabulary);
  const auto ids = tokenizer.encode(corpus);
  return std::vector<int64_t>(ids.begin(), ids.end());
}

nn::AdamWOptions adamw_options(const TrainSettings& settings) {
  nn::AdamWOptions options;
  options.lr = settings.lr;
  options.beta1 = settings.beta1;
  options.beta2 = settings.beta2;
  options.eps = settings.eps;
  options.weight_decay = settings.weight_decay;
  options.decay_position_embeddings = true;  // every 2-D weight decays, as in nanoGPT
  return options;
}

double mean_loss(GPT& model, const TokenSplit& split, const GPTConfig& config, int64_t batches,
                 Generator& generator) {
  double total = 0;
  for (int64_t batch_index = 0; batch_index < batches; ++batch_index) {
    const Batch batch = split.sample_batch(config.batch_size, config.block_size, generator);
    total += model.loss(batch.inputs, batch.targets).item<double>();
  }
  return total / static_cast<double>(batches);
}

}  // namespace

TrainingRun::TrainingRun(CheckpointHeader header, const std::string& corpus)
    : header_(std::move(header)),
      splits_(split_by_position(encode_corpus(corpus, header_.vocabulary))),
      data_generator_(header_.settings.seed + kDataSeedOffset) {
  header_.settings.validate();
  header_.config.validate();
  schedule_.max_lr = header_.settings.lr;
  schedule_.min_lr = header_.settings.min_lr;
  schedule_.decay_iters = header_.settings.iters;
  schedule_.warmup_iters = std::min(header_.settings.warmup, header_.settings.iters);
  schedule_.validate();
  // Fail now, not at the first batch, when the text is too short for the context.
  for (const TokenSplit* split : {&splits_.train, &splits_.val}) {
    check(split->size() > header_.config.block_size, "train: the ", split->name(), " split has ", split->size(),
          " tokens, too few for one window of block size ", header_.config.block_size,
          " + 1; use a longer text or a smaller --block-size");
  }
}

std::unique_ptr<TrainingRun> TrainingRun::start(const std::string& corpus, GPTConfig config,
                                                const TrainSettings& settings) {
  CheckpointHeader header;
  try {
    header.vocabulary = tokenizer::CharTokenizer::from_corpus(corpus).serialize();
  } catch (const tokenizer::TokenizerError& error) {
    fail("train: cannot build a character vocabulary from the text: ", error.what());
  }
  config.vocab_size = static_cast<int64_t>(tokenizer::CharTokenizer::deserialize(header.vocabulary).vocab_size());
  header.config = config;
  header.settings = settings;
  std::unique_ptr<TrainingRun> run(new TrainingRun(std::move(header), corpus));
  run->model_ = std::make_unique<GPT>(run->header_.config, settings.seed);
  run->arena_ = std::make_unique<nn::ParameterArena>(*run->model_);
  run->optimizer_ = std::make_unique<nn::AdamW>(*run->arena_, adamw_options(settings));
  return run;
}

std::unique_ptr<TrainingRun> TrainingRun::resume(const Checkpoint& checkpoint, const std::string& corpus,
                                                 const TrainSettings& settings) {
  check(checkpoint.has_optimizer_state, "train --resume: '", checkpoint.path,
        "' holds weights only; resume from the run's ", kLatestCheckpointFile);
  CheckpointHeader header = checkpoint.header;
  header.settings = settings;
  check(header.step <= settings.iters, "train --resume: the checkpoint is at step ", header.step,
        ", past --iters ", settings.iters, "; give a larger --iters to train further");
  std::unique_ptr<TrainingRun> run(new TrainingRun(std::move(header), corpus));
  run->model_ = std::make_unique<GPT>(run->header_.config, settings.seed, DType::Float32, /*initialize=*/false);
  restore_parameters(checkpoint, *run->model_);
  run->arena_ = std::make_unique<nn::ParameterArena>(*run->model_);
  run->optimizer_ = std::make_unique<nn::AdamW>(*run->arena_, adamw_options(settings));
  restore_optimizer(checkpoint, *run->optimizer_);
  run->header_.data_generator.restore(run->data_generator_);
  run->header_.dropout_generator.restore(run->model_->dropout_generator());
  return run;
}

double TrainingRun::train_step() {
  const GPTConfig& config = header_.config;
  const int64_t step = header_.step;  // 0-based index of this step
  const Batch batch = splits_.train.sample_batch(config.batch_size, config.block_size, data_generator_);
  arena_->zero_grad();
  Tensor loss = model_->loss(batch.inputs, batch.targets);
  const double loss_value = loss.item<double>();
  check(std::isfinite(loss_value), "train: the loss is ", std::isnan(loss_value) ? "NaN" : "infinite", " at step ", step + 1,
        " (lr ", schedule_.at(step), "); stopping. Try a lower --lr or a tighter --grad-clip; the last "
        "checkpoint written is from before this step");
  backward(loss);
  last_grad_norm_ = header_.settings.grad_clip > 0 ? nn::clip_grad_norm(*arena_, header_.settings.grad_clip)
                                                   : nn::grad_norm(*arena_);
  // A finite loss can still have non-finite gradients; the update would spread them into every weight.
  check(std::isfinite(last_grad_norm_), "train: the gradient norm is ", last_grad_norm_, " at step ", step + 1,
        " (lr ", schedule_.at(step), "); stopping before the update. Try a lower --lr or a tighter --grad-clip; "
        "the last checkpoint written is from before this step");
  optimizer_->set_lr(schedule_.at(step));
  optimizer_->step();
  header_.step = step + 1;
  return loss_value;
}

Evaluation TrainingRun::evaluate() {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval_mode(*model_);
  const GPTConfig& config = header_.config;
  Generator train_batches(header_.settings.seed + kEvalSeedOffset);
  Generator val_batches(header_.settings.seed + kEvalSeedOffset);
  Evaluation evaluation{mean_loss(*model_, splits_.train, config, header_.settings.eval_iters, train_batches),
                        mean_loss(*model_, splits_.val, config, header_.settings.eval_iters, val_batches)};
  return evaluation;
}

void TrainingRun::save(const std::string& path, bool with_optimizer) {
  header_.data_generator = GeneratorState::of(data_generator_);
  header_.dropout_generator = GeneratorState::of(model_->dropout_generator());
  save_checkpoint(path, header_, *model_, with_optimizer ? optimizer_.get() : nullptr);
}

TrainResult TrainingRun::train(const TrainOutputs& outputs, std::ostream& progress) {
  namespace fs = std::filesystem;
  check(!outputs.out_dir.empty(), "train: no output directory given (--out DIR)");
  fs::create_directories(outputs.out_dir);
  const std::string latest_path = (fs::path(outputs.out_dir) / kLatestCheckpointFile).string();
  const std::string best_path = (fs::path(outputs.out_dir) / kBestCheckpointFile).string();
  // Saves a killed run was in the middle of left their temporary files: clear them.
  for (const std::string& path : {latest_path, best_path}) {
    if (const int removed = remove_stale_temporary_files(path); removed > 0)
      progress << "removed " << removed << " temporary file" << (removed == 1 ? "" : "s")
               << " left by an interrupted save of " << path << "\n";
  }
  const TrainSettings& settings = header_.settings;
  const int64_t end = outputs.stop_after >= 0 ? std::min(outputs.stop_after, settings.iters) : settings.iters;
  const bool resumed = header_.step > 0;
  TrainLog log(progress, outputs.progress_is_terminal, outputs.metrics_path, resumed ? header_.step : -1,
               header_.config.batch_size * header_.config.block_size);

  TrainResult result;
  result.last_val_loss = std::numeric_limits<double>::quiet_NaN();
  // A resumed run starts at a step whose evaluation (if it had one) ran before the checkpoint was written.
  bool skip_evaluation = resumed;
  model_->train();
  while (true) {
    const int64_t step = header_.step;
    const bool evaluation_due = step % settings.eval_interval == 0 || step == settings.iters;
    if (evaluation_due && !skip_evaluation) {
      const Evaluation evaluation = evaluate();
      // Weights that give a non-finite loss are never written over a good checkpoint.
      check(std::isfinite(evaluation.train_loss) && std::isfinite(evaluation.val_loss),
            "train: at step ", step, " the evaluation loss is ", evaluation.train_loss, " (train) and ",
            evaluation.val_loss, " (val); the weights have diverged, so they were not saved. Try a lower --lr or a "
            "tighter --grad-clip; ", latest_path, " is still the last good checkpoint");
      const bool best = evaluation.val_loss < header_.best_val_loss;
      if (best) header_.best_val_loss = evaluation.val_loss;
      log.eval({step, evaluation.train_loss, evaluation.val_loss, schedule_.at(std::max<int64_t>(step - 1, 0))},
               best);
      result.last_val_loss = evaluation.val_loss;
      if (best) save(best_path, /*with_optimizer=*/false);
      save(latest_path, /*with_optimizer=*/true);
    }
    skip_evaluation = false;
    if (step >= end) break;
    const auto started = std::chrono::steady_clock::now();
    const double loss = train_step();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
    result.step_losses.push_back(loss);
    log.step({header_.step, settings.iters, loss, schedule_.at(step), last_grad_norm_, elapsed.count()});
  }
  if (header_.step % settings.eval_interval != 0 && header_.step != settings.iters) {
    save(latest_path, /*with_optimizer=*/true);  // stopped between evaluations (stop_after)
  }
  log.note("checkpoints: " + latest_path + " (step " + std::to_string(header_.step) + ")" +
           (fs::exists(best_path) ? ", " + best_path + " (best val loss)" : ""));
  result.steps = header_.step;
  result.best_val_loss = header_.best_val_loss;
  return result;
}

}  // namespace tg
