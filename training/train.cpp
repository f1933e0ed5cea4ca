#include "tinygpt/training/train.h"

#include <chrono>
#include <cstdio>
#include <cmath>
#include <filesystem>
#include <limits>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/elementwise_ops.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/datasets/file_hash.h"
#include "tinygpt/models/assistant_loss.h"
#include "tinygpt/models/evaluate.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/models/lora_files.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/storage.h"
#include "tinygpt/training/optimizer_setup.h"
#include "tinygpt/training/train_log.h"
#include "tinygpt/nn/optim/clip.h"
#include "tinygpt/nn/optim/optimizer.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/io/atomic_file.h"
#include "tinygpt/tensor/runtime/thread_governor.h"
#include "tinygpt/tensor/view.h"

namespace tg {

namespace {

// The batches of a run come from generators seeded from the run's seed, each
// with its own offset so that they draw independent streams.
constexpr uint64_t kDataSeedOffset = 1;  // training batches
constexpr uint64_t kEvalSeedOffset = 2;  // evaluation batches (the same ones at every evaluation)

// The data must be encoded with the model's tokenizer: the same ids mean the same text.
void check_same_tokenizer(const nlohmann::json& model_tokenizer, const tokenizer::TextTokenizer& data_tokenizer,
                          const std::string& model_source) {
  if (model_tokenizer == data_tokenizer.to_json()) return;
  const tokenizer::TextTokenizer model = tokenizer::TextTokenizer::from_json(model_tokenizer);
  fail("train: the data is tokenised with a ", data_tokenizer.kind(), " tokenizer of ", data_tokenizer.vocab_size(),
       " tokens, but ", model_source, " was trained with a different ", model.kind(), " tokenizer of ",
       model.vocab_size(), " tokens; prepare the data with the model's tokenizer");
}

// Copies every parameter of `from` into `to` (same names and shapes), except
// that the learned position table may lose rows: `to` reads shorter contexts.
void copy_weights_cropping_positions(const GPT& from, GPT& to) {
  const auto sources = from.named_parameters();
  const auto targets = to.named_parameters();
  check(sources.size() == targets.size(), "train: the model has ", sources.size(), " parameters, the copy ",
        targets.size());
  for (size_t i = 0; i < sources.size(); ++i) {
    const auto& [name, source] = sources[i];
    const auto& [target_name, target] = targets[i];
    check(name == target_name, "train: parameter ", i, " is '", name, "' in the model, '", target_name, "' in the copy");
    const bool position_table = name == "wpe.weight";
    const Tensor rows = position_table ? raw::narrow(source, 0, 0, target.shape()[0]) : source;
    check(rows.shape() == target.shape(), "train: parameter '", name, "' is ", source.shape(), " in the model, ",
          target.shape(), " in the copy");
    raw::copy_(target, rows);
  }
}

// Rank `rank`'s stream of the generator seeded `seed`: rank 0 keeps `seed` itself
// (a single process draws what it always drew), the others a mix of it and the rank.
uint64_t rank_seed(uint64_t seed, int rank) {
  return rank == 0 ? seed : Generator(seed).bits(static_cast<uint64_t>(rank));
}

// A seed for streams that restart at `step` (a job resumed with another number of ranks).
uint64_t restart_seed(uint64_t seed, int64_t step) { return Generator(seed).bits(~static_cast<uint64_t>(step)); }

double batch_loss(GPT& model, const Batch& batch) { return model.loss(batch.inputs, batch.targets).item<double>(); }

// XXH3 of the bytes of a contiguous tensor.
uint64_t checksum(const Tensor& values) {
  Xxh3Hasher hasher;
  hasher.update(values.data<float>(), static_cast<size_t>(values.numel()) * sizeof(float));
  return hasher.digest();
}

}  // namespace

TrainingRun::TrainingRun(CheckpointHeader header, TrainingData data, dist::Communicator& job)
    : header_(std::move(header)), data_(std::move(data)), job_(job) {
  header_.settings.resolve_defaults();
  header_.settings.validate();
  header_.config.validate();
  check(data_.tokenizer.vocab_size() <= header_.config.vocab_size, "train: the tokenizer has ",
        data_.tokenizer.vocab_size(), " tokens, more than the model's vocabulary of ", header_.config.vocab_size);
  schedule_ = header_.settings.lr_schedule();
  schedule_.validate();
  // Fail now, not at the first batch, when the text is too short for the context (conversations: when
  // none has an assistant token within it; a shorter conversation is a row of its own).
  if (data_.conversations) {
    for (const ConversationSplit* split : {&data_.conversations->train, &data_.conversations->val})
      check(split->fit(header_.config.block_size).usable > 0, "train: no conversation of the ", split->name(),
            " split has an assistant token within the block size ", header_.config.block_size,
            "; use a larger --block-size");
  } else {
    for (const TokenSplit* split : {&data_.splits.train, &data_.splits.val})
      check(split->size() > header_.config.block_size, "train: the ", split->name(), " split has ", split->size(),
            " tokens, too few for one window of block size ", header_.config.block_size,
            " + 1; use a longer text or a smaller --block-size");
  }
}

TrainingRun::~TrainingRun() = default;

void TrainingRun::create_optimizer() {
  arena_ = std::make_unique<nn::ParameterArena>(*model_);
  optimizer_ = make_optimizer(*arena_, header_.config, header_.settings);
}

void TrainingRun::seed_rank_generators() {
  const int rank = job_.rank();
  data_generators_ = {Generator(rank_seed(header_.settings.seed + kDataSeedOffset, rank))};
  Generator& dropout = model_->dropout_generator();
  dropout.set_state(rank_seed(dropout.seed(), rank), 0);
}

void TrainingRun::restore_rank_generators() {
  const int rank = job_.rank();
  data_generators_ = {Generator()};
  Generator& dropout = model_->dropout_generator();
  if (header_.ranks() == job_.size()) {
    const RankGenerators mine = rank == 0 ? RankGenerators{header_.data_generator, header_.dropout_generator}
                                          : header_.other_ranks[static_cast<size_t>(rank - 1)];
    mine.data.restore(data_generators_[0]);
    mine.dropout.restore(dropout);
    return;
  }
  // Another number of ranks than wrote the checkpoint: every rank starts fresh streams.
  const int64_t step = header_.step;
  data_generators_[0] = Generator(rank_seed(restart_seed(header_.settings.seed + kDataSeedOffset, step), rank));
  dropout.set_state(rank_seed(restart_seed(header_.dropout_generator.seed, step), rank), 0);
}

void TrainingRun::check_ranks_agree() const {
  if (job_.size() == 1) return;
  const nlohmann::json identity = {{"config", header_.config.to_json()},  {"settings", header_.settings.to_json()},
                                   {"tokenizer", header_.tokenizer},       {"step", header_.step},
                                   {"train_tokens", data_.splits.train.size()}, {"val_tokens", data_.splits.val.size()},
                                   {"data_hash", data_.source ? data_.source->xxh3 : ""}};
  const std::string text = identity.dump();
  Xxh3Hasher hasher;
  hasher.update(text.data(), text.size());
  const uint64_t mine = hasher.digest();
  const std::vector<uint64_t> all = job_.all_gather(std::span<const uint64_t>(&mine, 1));
  for (size_t rank = 1; rank < all.size(); ++rank) {
    dist::check_on_every_rank(all[rank] == all[0], "train: rank ", rank, " of ", all.size(),
                              " was started with other settings, another model or other data than rank 0 (the "
                              "flags, the checkpoint and the corpus must be the same for every rank)");
  }
}

void TrainingRun::check_replicas_agree() const {
  if (job_.size() == 1) return;
  const uint64_t mine = checksum(arena_->params());
  const std::vector<uint64_t> all = job_.all_gather(std::span<const uint64_t>(&mine, 1));
  for (size_t rank = 1; rank < all.size(); ++rank) {
    dist::check_on_every_rank(all[rank] == all[0], "train: at step ", header_.step, " the weights of rank ", rank,
                              " differ from rank 0's (checksum ", xxh3_hex(all[rank]), " against ", xxh3_hex(all[0]),
                              "); the ranks must stay identical, so this is a fault (of tinygpt, MPI or a machine)");
  }
}

void TrainingRun::draw_batches_as_ranks(int ranks) {
  check(job_.size() == 1, "draw_batches_as_ranks: only a single process replays a job of several ranks");
  check(ranks >= 1 && header_.config.batch_size % ranks == 0, "draw_batches_as_ranks: the batch size ",
        header_.config.batch_size, " does not divide among ", ranks, " ranks");
  data_generators_.clear();
  for (int rank = 0; rank < ranks; ++rank)
    data_generators_.emplace_back(rank_seed(header_.settings.seed + kDataSeedOffset, rank));
}

Batch TrainingRun::next_micro_batch() {
  const int64_t batch_size = header_.config.batch_size, block_size = header_.config.block_size;
  if (data_.conversations) {  // one conversation a row, padded to the longest of the batch
    const ConversationSplit& conversations = data_.conversations->train;
    if (data_generators_.size() == 1) return conversations.sample_batch(batch_size, block_size, data_generators_[0]);
    std::vector<Batch> slices;  // draw_batches_as_ranks: slice r is what rank r would draw
    const int64_t rows = batch_size / static_cast<int64_t>(data_generators_.size());
    for (Generator& generator : data_generators_) slices.push_back(conversations.sample_batch(rows, block_size, generator));
    return stack_rows(slices);
  }
  const TokenSplit& train = data_.splits.train;
  if (data_generators_.size() == 1) return train.sample_batch(batch_size, block_size, data_generators_[0]);
  // draw_batches_as_ranks: slice r of the batch is what rank r would draw.
  const int64_t rows = batch_size / static_cast<int64_t>(data_generators_.size());
  Batch batch{Tensor::empty({batch_size, block_size}, DType::Int64),
              Tensor::empty({batch_size, block_size}, DType::Int64)};  // (B, T) each
  for (size_t rank = 0; rank < data_generators_.size(); ++rank) {
    const Batch slice = train.sample_batch(rows, block_size, data_generators_[rank]);  // (B / ranks, T)
    const int64_t first = static_cast<int64_t>(rank) * rows * block_size;
    std::copy_n(slice.inputs.data<int64_t>(), rows * block_size, batch.inputs.data<int64_t>() + first);
    std::copy_n(slice.targets.data<int64_t>(), rows * block_size, batch.targets.data<int64_t>() + first);
  }
  return batch;
}

std::unique_ptr<TrainingRun> TrainingRun::start(TrainingData data, GPTConfig config, const TrainSettings& settings,
                                                dist::Communicator& job) {
  CheckpointHeader header;
  header.tokenizer = data.tokenizer.to_json();
  header.data = data.source;
  config.vocab_size = data.tokenizer.vocab_size();
  header.config = config;
  header.settings = settings;
  check(settings.lora_rank == 0, "train: --lora-rank adapts a trained model: give it with --init-from");
  std::unique_ptr<TrainingRun> run(new TrainingRun(std::move(header), std::move(data), job));
  run->model_ = std::make_unique<GPT>(run->header_.config, settings.seed);
  run->create_optimizer();
  run->seed_rank_generators();
  run->check_ranks_agree();
  return run;
}

std::unique_ptr<TrainingRun> TrainingRun::start_from(const GPT& initial,
                                                     const tokenizer::TextTokenizer& initial_tokenizer,
                                                     TrainingData data, GPTConfig config,
                                                     const TrainSettings& settings, dist::Communicator& job) {
  check_fine_tuning(initial, initial_tokenizer, data, config);
  auto model = std::make_unique<GPT>(config, settings.seed, DType::Float32, /*initialize=*/false);
  copy_weights_cropping_positions(initial, *model);
  return fine_tune(std::move(model), initial_tokenizer, std::move(data), settings, job);
}

std::unique_ptr<TrainingRun> TrainingRun::start_from(std::unique_ptr<GPT> initial,
                                                     const tokenizer::TextTokenizer& initial_tokenizer,
                                                     TrainingData data, GPTConfig config,
                                                     const TrainSettings& settings, dist::Communicator& job) {
  GPTConfig adopted = initial->config();
  adopted.batch_size = config.batch_size;  // the one option that leaves the modules as they are
  if (adopted.to_json() != config.to_json())
    return start_from(*initial, initial_tokenizer, std::move(data), config, settings, job);
  check_fine_tuning(*initial, initial_tokenizer, data, config);
  initial->train();
  initial->reseed_dropout(settings.seed);  // as the copy start_from makes would draw
  return fine_tune(std::move(initial), initial_tokenizer, std::move(data), settings, job, config);
}

void TrainingRun::check_fine_tuning(const GPT& initial, const tokenizer::TextTokenizer& initial_tokenizer,
                                    const TrainingData& data, const GPTConfig& config) {
  check_same_tokenizer(initial_tokenizer.to_json(), data.tokenizer, "the model to start from");
  check(config.block_size <= initial.config().block_size, "train: --block-size ", config.block_size,
        " is longer than the context of the model to start from (", initial.config().block_size,
        "); a fine-tuned model can only read shorter contexts");
}

std::unique_ptr<TrainingRun> TrainingRun::fine_tune(std::unique_ptr<GPT> model,
                                                    const tokenizer::TextTokenizer& initial_tokenizer,
                                                    TrainingData data, const TrainSettings& settings,
                                                    dist::Communicator& job, std::optional<GPTConfig> config) {
  CheckpointHeader header;
  header.tokenizer = initial_tokenizer.to_json();
  header.data = data.source;
  header.config = config.value_or(model->config());
  header.settings = settings;
  std::unique_ptr<TrainingRun> run(new TrainingRun(std::move(header), std::move(data), job));
  run->model_ = std::move(model);
  if (const std::optional<LoraConfig> lora = settings.lora(run->header_.config)) {
    run->model_->attach_lora(*lora, settings.seed);
    if (settings.lora_base != "float32") {
      run->model_->quantize(nn::parse_weight_format(settings.lora_base));  // QLoRA: the frozen weights held reduced
      Storage::release_cached();
    }
  }
  run->create_optimizer();
  run->seed_rank_generators();
  run->check_ranks_agree();
  return run;
}

std::unique_ptr<TrainingRun> TrainingRun::resume(const Checkpoint& checkpoint, TrainingData data,
                                                 const TrainSettings& settings, dist::Communicator& job) {
  check(checkpoint.header.weights == DType::Float32 || checkpoint.header.settings.lora_rank > 0, "train --resume: '",
        checkpoint.path, "' holds ",
        dtype_name(checkpoint.header.weights), " weights (tinygpt quantize), which are for inference; training needs ",
        "the float32 checkpoint");
  check(checkpoint.has_optimizer_state, "train --resume: '", checkpoint.path,
        "' holds weights only; resume from the run's ", kLatestCheckpointFile);
  check_same_tokenizer(checkpoint.header.tokenizer, data.tokenizer, checkpoint.path);
  CheckpointHeader header = checkpoint.header;
  header.settings = settings;
  if (data.source) {
    // Other data (the caller allowed it): its validation split is another, so the old best is no yardstick.
    // The same data where it now lies, or data a checkpoint never recorded, keeps it.
    if (header.data && !header.data->same_data(*data.source))
      header.best_val_loss = std::numeric_limits<double>::infinity();
    header.data = data.source;
  }
  check(header.step <= settings.iters, "train --resume: the checkpoint is at step ", header.step,
        ", past --iters ", settings.iters, "; give a larger --iters to train further");
  std::unique_ptr<TrainingRun> run(new TrainingRun(std::move(header), std::move(data), job));
  run->model_ = std::make_unique<GPT>(run->header_.config, settings.seed, DType::Float32, /*initialize=*/false);
  restore_parameters(checkpoint, *run->model_);
  run->create_optimizer();
  restore_optimizer(checkpoint, *run->optimizer_);
  run->restore_rank_generators();
  run->check_ranks_agree();
  return run;
}

double TrainingRun::train_step() {
  adapt_threads_to_load();  // between steps: a step's numbers do not depend on the thread count
  const int64_t step = header_.step;  // 0-based index of this step
  const int64_t micro_batches = header_.settings.grad_accum;
  arena_->zero_grad();
  double loss_sum = 0;
  for (int64_t micro_batch = 0; micro_batch < micro_batches; ++micro_batch) {
    const Batch batch = next_micro_batch();
    Tensor loss = model_->loss(batch.inputs, batch.targets);
    loss_sum += loss.item<double>();
    // The gradients of the micro-batches add up in the arena: scaled, they sum to the mean's.
    backward(micro_batches == 1 ? loss : loss * (1.0 / static_cast<double>(micro_batches)));
  }
  // The ranks agree on the loss before anything else: a NaN on one of them stops them all. So do
  // they on a request to stop (Ctrl-C reaches the ranks at different moments).
  const bool stop_requested_here = stop_requested_ && stop_requested_->load();
  double job_sums[2] = {loss_sum, stop_requested_here ? 1.0 : 0.0};
  if (job_.size() > 1) job_.all_reduce_sum(std::span<double>(job_sums));
  job_stop_agreed_ = job_sums[1] > 0;
  const double loss = job_sums[0] / static_cast<double>(micro_batches * job_.size());
  dist::check_on_every_rank(std::isfinite(loss), "train: the loss is ", std::isnan(loss) ? "NaN" : "infinite",
                            " at step ", step + 1, " (lr ", schedule_.at(step), "); stopping. Try a lower --lr or a "
                            "tighter --grad-clip; the last checkpoint written is from before this step");
  const auto all_reduce_started = std::chrono::steady_clock::now();
  Tensor grads = arena_->grads();
  dist::all_reduce_mean(job_, grads);  // (P,): every rank now holds the mean gradient of the job's batch
  last_all_reduce_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - all_reduce_started).count();
  last_grad_norm_ = header_.settings.grad_clip > 0 ? nn::clip_grad_norm(*arena_, header_.settings.grad_clip)
                                                   : nn::grad_norm(*arena_);
  // A finite loss can still have non-finite gradients; the update would spread them into every weight.
  dist::check_on_every_rank(std::isfinite(last_grad_norm_), "train: the gradient norm is ", last_grad_norm_,
                            " at step ", step + 1, " (lr ", schedule_.at(step), "); stopping before the update. Try a "
                            "lower --lr or a tighter --grad-clip; the last checkpoint written is from before this step");
  optimizer_->set_lr(schedule_.at(step));
  optimizer_->step();
  header_.step = step + 1;
  return loss;
}

// Conversation data: the mean loss over every assistant token of the whole val split and of a fixed
// sample of eval_iters x B train conversations (models/assistant_loss.h), each scored once.
Evaluation TrainingRun::evaluate_conversations(const EvaluationProgress& progress) {
  NoGradGuard no_grad;
  nn::EvalModeGuard eval_mode(*model_);
  const GPTConfig& config = header_.config;
  const ConversationSplits& conversations = *data_.conversations;
  std::vector<int64_t> train_sample = conversations.train.usable(config.block_size);
  Generator sample_generator(header_.settings.seed + kEvalSeedOffset);  // the same sample at every evaluation
  for (size_t i = 0; i < train_sample.size(); ++i)
    std::swap(train_sample[i], train_sample[i + sample_generator.next_below(train_sample.size() - i)]);
  train_sample.resize(std::min<size_t>(train_sample.size(), header_.settings.eval_iters * config.batch_size));
  const auto train_batches = conversations.train.evaluation_batches(train_sample, config.batch_size, config.block_size);
  const auto val_batches = conversations.val.evaluation_batches(conversations.val.usable(config.block_size),
                                                                config.batch_size, config.block_size);
  const int64_t batches = static_cast<int64_t>(train_batches.size() + val_batches.size());
  double sums[4] = {0, 0, 0, 0};  // train loss, train tokens, val loss, val tokens
  for (int64_t index = 0; index < batches; ++index) {
    if (job_.size() == 1 && stop_requested_ && stop_requested_->load()) return {0, 0, /*interrupted=*/true};
    adapt_threads_to_load();
    if (index % job_.size() == job_.rank()) {  // batch i is rank (i mod N)'s, as for windows
      const bool val = index >= static_cast<int64_t>(train_batches.size());
      const ConversationSplit& split = val ? conversations.val : conversations.train;
      const std::vector<int64_t>& rows = val ? val_batches[index - train_batches.size()] : train_batches[index];
      const AssistantLoss loss = batch_assistant_loss(*model_, split.batch(rows, config.block_size));
      sums[val ? 2 : 0] += loss.loss_sum;
      sums[val ? 3 : 1] += static_cast<double>(loss.tokens);
    }
    if (progress) progress(index + 1, batches);
  }
  job_.all_reduce_sum(std::span<double>(sums));
  return {sums[0] / sums[1], sums[2] / sums[3]};
}

Evaluation TrainingRun::evaluate(const EvaluationProgress& progress) {
  if (data_.conversations) return evaluate_conversations(progress);
  NoGradGuard no_grad;
  nn::EvalModeGuard eval_mode(*model_);
  const GPTConfig& config = header_.config;
  const int64_t batches = header_.settings.eval_iters;
  // The same batches at every evaluation and on every number of ranks: batch i is rank (i mod N)'s to evaluate.
  Generator train_batches(header_.settings.seed + kEvalSeedOffset);
  Generator val_batches(header_.settings.seed + kEvalSeedOffset);
  double loss_sums[2] = {0, 0};  // train, val
  for (int64_t batch_index = 0; batch_index < batches; ++batch_index) {
    // A single process stops between batches when asked (the ranks of a job would have to agree first).
    if (job_.size() == 1 && stop_requested_ && stop_requested_->load()) return {0, 0, /*interrupted=*/true};
    adapt_threads_to_load();  // a forward's numbers do not depend on the thread count either
    const Batch train = data_.splits.train.sample_batch(config.batch_size, config.block_size, train_batches);
    const Batch val = data_.splits.val.sample_batch(config.batch_size, config.block_size, val_batches);
    if (batch_index % job_.size() == job_.rank()) {
      loss_sums[0] += batch_loss(*model_, train);
      if (header_.settings.eval_whole_val == 0) loss_sums[1] += batch_loss(*model_, val);
    }
    if (progress) progress(batch_index + 1, batches);
  }
  job_.all_reduce_sum(std::span<double>(loss_sums));
  Evaluation evaluation{loss_sums[0] / static_cast<double>(batches), loss_sums[1] / static_cast<double>(batches)};
  if (header_.settings.eval_whole_val == 1) {
    // Every rank scores the whole split (the same number everywhere, no exchange needed).
    const std::vector<int64_t> val = data_.splits.val.ids(0, data_.splits.val.size());
    evaluation.val_loss = tg::evaluate(*model_, val, config.block_size).loss;
  }
  return evaluation;
}

void TrainingRun::save(const std::string& path, bool with_optimizer) {
  header_.data_generator = GeneratorState::of(data_generators_[0]);
  header_.dropout_generator = GeneratorState::of(model_->dropout_generator());
  header_.other_ranks.clear();
  if (job_.size() > 1) {
    const uint64_t mine[4] = {header_.data_generator.seed, header_.data_generator.counter,
                              header_.dropout_generator.seed, header_.dropout_generator.counter};
    const std::vector<uint64_t> all = job_.all_gather(mine);
    for (int rank = 1; rank < job_.size(); ++rank) {
      const uint64_t* state = all.data() + 4 * rank;
      header_.other_ranks.push_back({{state[0], state[1]}, {state[2], state[3]}});
    }
  }
  if (job_.is_root()) save_checkpoint(path, header_, *model_, with_optimizer ? optimizer_.get() : nullptr);
}

TrainResult TrainingRun::train(const TrainOutputs& outputs, std::ostream& progress) {
  namespace fs = std::filesystem;
  check(!outputs.out_dir.empty(), "train: no output directory given (--out DIR)");
  const bool root = job_.is_root();  // the one rank that prints, logs and writes
  const std::string latest_path = (fs::path(outputs.out_dir) / kLatestCheckpointFile).string();
  const std::string best_path = (fs::path(outputs.out_dir) / kBestCheckpointFile).string();
  if (root) {
    fs::create_directories(outputs.out_dir);
    // Saves a killed run was in the middle of left their temporary files: clear them. The metrics
    // log has one too when the kill came while a resume was cutting it back (training/train_log.h).
    for (const std::string& path : {latest_path, best_path, outputs.metrics_path}) {
      if (path.empty()) continue;
      if (const int removed = remove_stale_temporary_files(path); removed > 0)
        progress << "removed " << removed << " temporary file" << (removed == 1 ? "" : "s")
                 << " left by an interrupted save of " << path << "\n";
    }
  }
  const TrainSettings& settings = header_.settings;
  const int64_t end = outputs.stop_after >= 0 ? std::min(outputs.stop_after, settings.iters) : settings.iters;
  const bool resumed = header_.step > 0;
  std::ostream discarded(nullptr);  // the other ranks' log lines go nowhere
  TrainLog log(root ? progress : discarded, root && outputs.progress_is_terminal, root ? outputs.metrics_path : "",
               resumed ? header_.step : -1,
               header_.config.batch_size * header_.config.block_size * settings.grad_accum * job_.size(),
               job_.size());

  const auto session_started = std::chrono::steady_clock::now();
  TrainResult result;
  result.last_val_loss = std::numeric_limits<double>::quiet_NaN();
  if (outputs.profile) reset_profile();
  stop_requested_ = outputs.stop_requested;
  // A resumed run starts at a step whose evaluation (if it had one) ran before the checkpoint was written.
  bool skip_evaluation = resumed;
  int64_t saved_step = resumed ? header_.step : -1;  // the step DIR/model.safetensors holds
  const auto save_latest = [&] {
    save(latest_path, /*with_optimizer=*/true);
    saved_step = header_.step;
  };
  model_->train();
  while (true) {
    const int64_t step = header_.step;
    const bool evaluation_due = step % settings.eval_interval == 0 || step == settings.iters;
    if (evaluation_due && !skip_evaluation) {
      check_replicas_agree();
      const auto evaluation_started = std::chrono::steady_clock::now();
      const Evaluation evaluation = evaluate([&](int64_t batches_done, int64_t batches) {
        const std::chrono::duration<double> seconds = std::chrono::steady_clock::now() - evaluation_started;
        log.eval_progress(step, batches_done, batches, seconds.count());
      });
      if (evaluation.interrupted) {
        result.interrupted = true;
        break;
      }
      // Weights that give a non-finite loss are never written over a good checkpoint.
      dist::check_on_every_rank(std::isfinite(evaluation.train_loss) && std::isfinite(evaluation.val_loss),
            "train: at step ", step, " the evaluation loss is ", evaluation.train_loss, " (train) and ",
            evaluation.val_loss, " (val); the weights have diverged, so they were not saved. Try a lower --lr or a "
            "tighter --grad-clip; ", latest_path, " is still the last good checkpoint");
      const bool best = evaluation.val_loss < header_.best_val_loss;
      if (best) header_.best_val_loss = evaluation.val_loss;
      const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - session_started;
      log.eval({step, evaluation.train_loss, evaluation.val_loss, schedule_.at(std::max<int64_t>(step - 1, 0)),
                elapsed.count()},
               best);
      result.last_val_loss = evaluation.val_loss;
      if (best) {
        save(best_path, /*with_optimizer=*/false);
        if (model_->lora() && job_.is_root()) save_peft_adapter(*model_, outputs.out_dir, header_.settings.init_from);
      }
      save_latest();
      if (settings.target_loss > 0 && evaluation.val_loss <= settings.target_loss) {  // the same on every rank
        char line[120];
        std::snprintf(line, sizeof line, "target reached: val loss %.4f <= %g at step %lld", evaluation.val_loss,
                      settings.target_loss, static_cast<long long>(step));
        log.note(line);
        result.reached_target = true;
        break;
      }
    } else if (settings.save_interval > 0 && step % settings.save_interval == 0 && step != saved_step) {
      save_latest();
    }
    skip_evaluation = false;
    if (step >= end) break;
    const auto started = std::chrono::steady_clock::now();
    double loss = 0;
    {
      // The session's first step warms up (buffers first allocated, BLAS's threads started): not profiled.
      const ProfiledStep profiled(outputs.profile && !result.step_losses.empty());
      loss = train_step();
    }
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - started;
    result.step_losses.push_back(loss);
    log.step({header_.step, settings.iters, loss, schedule_.at(step), last_grad_norm_, elapsed.count(),
              last_all_reduce_seconds_});
    if (job_stop_agreed_) {
      result.interrupted = true;
      break;
    }
  }
  stop_requested_ = nullptr;
  // Stopped between evaluations (stop_after, a request to stop): the steps since the last save are kept.
  // A new run asked to stop before its first step has nothing to keep.
  if (saved_step != header_.step && header_.step > 0) save_latest();
  result.saved_at_stop = saved_step == header_.step;
  if (result.saved_at_stop)
    log.note("checkpoints: " + latest_path + " (step " + std::to_string(header_.step) + ")" +
             (root && fs::exists(best_path) ? ", " + best_path + " (best val loss)" : ""));
  result.steps = header_.step;
  result.best_val_loss = header_.best_val_loss;
  if (outputs.profile) result.profile = profile_record();
  return result;
}

}  // namespace tg
