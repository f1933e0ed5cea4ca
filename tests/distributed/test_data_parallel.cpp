// Data-parallel training (distributed/), run as a job of 2 ranks by mpirun
// (tests/distributed/CMakeLists.txt). Both ranks run every test case in the same
// order, so their collectives meet; checks never end a case early on one rank only.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "tinygpt/distributed/job.h"
#include "tinygpt/distributed/mpi_communicator.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/train.h"
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/test_train_helpers.h"

namespace tg::testing {
namespace {

dist::Communicator& job() { return *dist::joined_job(); }

std::ostream quiet(nullptr);  // the runs' progress lines

// A directory every rank names alike (rank 0's pid), removed by rank 0 at the end of the scope.
class SharedScratchDir {
 public:
  explicit SharedScratchDir(const std::string& name) {
    const uint64_t pid = static_cast<uint64_t>(::getpid());
    const uint64_t root_pid = job().all_gather(std::span<const uint64_t>(&pid, 1))[0];
    path_ = std::filesystem::temp_directory_path() / ("tinygpt-mpi-test-" + std::to_string(root_pid) + "-" + name);
    if (job().is_root()) std::filesystem::remove_all(path_);
    wait_for_every_rank();
  }
  ~SharedScratchDir() {
    wait_for_every_rank();
    if (job().is_root()) std::filesystem::remove_all(path_);
  }
  std::string path() const { return path_.string(); }
  static void wait_for_every_rank() {
    const uint64_t nothing = 0;
    job().all_gather(std::span<const uint64_t>(&nothing, 1));
  }

 private:
  std::filesystem::path path_;
};

std::vector<float> parameters_of(TrainingRun& run) {
  std::vector<float> values;
  for (const auto& [name, parameter] : run.model().named_parameters()) {
    const Tensor flat = raw::contiguous(parameter);
    values.insert(values.end(), flat.data<float>(), flat.data<float>() + flat.numel());
  }
  return values;
}

// ||a - b|| / ||b||, in the 2-norm (p = 2) or the max-norm (p = 0)
double relative_difference(const std::vector<float>& a, const std::vector<float>& b, int p) {
  double difference = 0, size = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    const double d = std::abs(static_cast<double>(a[i]) - b[i]), v = std::abs(static_cast<double>(b[i]));
    difference = p == 2 ? difference + d * d : std::max(difference, d);
    size = p == 2 ? size + v * v : std::max(size, v);
  }
  return p == 2 ? std::sqrt(difference / size) : difference / size;
}

// Sets rank 1's last parameter (a bias) to `value`, leaving rank 0's alone.
void set_last_parameter_on_rank_1(TrainingRun& run, double value) {
  if (job().rank() == 1) fill_(run.model().named_parameters().back().second, value);
}

// The message of the dist::JobError `action` throws on this rank; "" if none.
template <class Action>
std::string job_error_of(const Action& action) {
  try {
    action();
  } catch (const dist::JobError& error) {
    return error.what();
  }
  return "";
}

GPTConfig config_with_batch(int64_t batch_size, double dropout = 0.0) {
  GPTConfig config = tiny_config(PositionalEncoding::Learned, dropout);
  config.batch_size = batch_size;
  return config;
}

}  // namespace

TEST_CASE("two ranks with batch B/2 take the steps of one process with batch B, with AdamW and with Muon") {
  REQUIRE(job().size() == 2);
  for (const auto& [optimizer, grad_accum] :
       {std::pair{"adamw", int64_t{1}}, std::pair{"adamw", int64_t{3}}, std::pair{"muon", int64_t{1}}, std::pair{"muon", int64_t{3}}}) {
    CAPTURE(optimizer);
    CAPTURE(grad_accum);
    TrainSettings settings = tiny_settings(8);
    settings.grad_accum = grad_accum;
    settings.optimizer = optimizer;
    const SharedScratchDir job_dir("equivalence-job");
    auto job_run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(4), settings, job());
    const TrainResult job_result = job_run->train(outputs_in(job_dir.path()), quiet);

    // Every rank computes the single process's run too, each in its own directory.
    const ScratchDir single_dir;
    auto single_run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(8), settings);
    single_run->draw_batches_as_ranks(2);
    const TrainResult single_result = single_run->train(outputs_in(single_dir.path()), quiet);

    const std::vector<float> job_parameters = parameters_of(*job_run), single_parameters = parameters_of(*single_run);
    const double difference = relative_difference(job_parameters, single_parameters, 2);
    MESSAGE(std::string(optimizer), ", grad_accum ", grad_accum, ": parameters differ by ", difference, " relative (2-norm), ",
            relative_difference(job_parameters, single_parameters, 0), " (max-norm)");
    CHECK(difference <= 1e-6);
    CHECK(difference > 0);  // the summation orders do differ: the job really computed its own gradients
    REQUIRE(job_result.step_losses.size() == single_result.step_losses.size());
    for (size_t step = 0; step < job_result.step_losses.size(); ++step)
      CHECK(job_result.step_losses[step] == doctest::Approx(single_result.step_losses[step]).epsilon(1e-5));
  }
}

TEST_CASE("an evaluation shared out over the ranks is the single process's") {
  const TrainSettings settings = tiny_settings(8);  // 2 batches per split: one per rank
  auto job_run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(3), settings, job());
  auto single_run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(3), settings);
  const Evaluation shared = job_run->evaluate(), whole = single_run->evaluate();
  CHECK(shared.train_loss == doctest::Approx(whole.train_loss).epsilon(1e-12));
  CHECK(shared.val_loss == doctest::Approx(whole.val_loss).epsilon(1e-12));
}

TEST_CASE("the ranks draw different batches and keep identical weights") {
  const SharedScratchDir dir("replicas");
  auto run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(2, 0.1), tiny_settings(4), job());
  run->train(outputs_in(dir.path()), quiet);
  const std::vector<float> mine = parameters_of(*run);
  // Compare rank 0's weights with rank 1's through their sum: identical weights sum to twice rank 0's.
  std::vector<double> sums(mine.begin(), mine.end());
  job().all_reduce_sum(sums);
  double largest_mismatch = 0;
  for (size_t i = 0; i < mine.size(); ++i) largest_mismatch = std::max(largest_mismatch, std::abs(sums[i] - 2.0 * mine[i]));
  CHECK(largest_mismatch == 0);
  // ... while the batches each rank drew differ (dropout masks too: dropout 0.1).
  const Checkpoint checkpoint = load_checkpoint(dir.path() + "/" + kLatestCheckpointFile);
  REQUIRE(checkpoint.header.other_ranks.size() == 1);
  CHECK(checkpoint.header.data_generator.seed != checkpoint.header.other_ranks[0].data.seed);
  CHECK(checkpoint.header.dropout_generator.seed != checkpoint.header.other_ranks[0].dropout.seed);
  CHECK(checkpoint.header.data_generator.counter == checkpoint.header.other_ranks[0].data.counter);
}

TEST_CASE("a resumed 2-rank run continues exactly as the uninterrupted one") {
  const TrainSettings settings = tiny_settings(10);  // evaluations at 0, 4, 8 and 10
  const GPTConfig config = config_with_batch(2, 0.1);
  const SharedScratchDir whole_dir("whole"), split_dir("split");
  auto whole = TrainingRun::start(char_level_data(tiny_corpus()), config, settings, job());
  const TrainResult whole_result = whole->train(outputs_in(whole_dir.path()), quiet);

  auto first = TrainingRun::start(char_level_data(tiny_corpus()), config, settings, job());
  first->train(outputs_in(split_dir.path(), /*stop_after=*/6), quiet);
  SharedScratchDir::wait_for_every_rank();  // rank 0 has written the checkpoint
  const Checkpoint checkpoint = load_checkpoint(split_dir.path() + "/" + kLatestCheckpointFile);
  CHECK(checkpoint.header.step == 6);
  CHECK(checkpoint.header.ranks() == 2);
  auto resumed = TrainingRun::resume(checkpoint, char_level_data(tiny_corpus()), settings, job());
  const TrainResult resumed_result = resumed->train(outputs_in(split_dir.path()), quiet);

  CHECK(parameters_of(*resumed) == parameters_of(*whole));
  REQUIRE(resumed_result.step_losses.size() == 4);
  for (size_t step = 0; step < 4; ++step) CHECK(resumed_result.step_losses[step] == whole_result.step_losses[6 + step]);
  CHECK(resumed_result.best_val_loss == whole_result.best_val_loss);
}

TEST_CASE("a NaN loss on one rank stops every rank") {
  const SharedScratchDir dir("nan");
  auto run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(2), tiny_settings(8), job());
  run->train(outputs_in(dir.path(), /*stop_after=*/1), quiet);
  set_last_parameter_on_rank_1(*run, std::nan(""));
  const std::string message = job_error_of([&] { run->train(outputs_in(dir.path()), quiet); });
  CHECK(message.find("the loss is NaN at step 2") != std::string::npos);
}

TEST_CASE("ranks whose weights differ are stopped at the next evaluation") {
  const SharedScratchDir dir("diverged");
  auto run = TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(2), tiny_settings(8), job());
  set_last_parameter_on_rank_1(*run, 0.5);
  const std::string message = job_error_of([&] { run->train(outputs_in(dir.path()), quiet); });
  CHECK(message.find("the weights of rank 1 differ from rank 0's") != std::string::npos);
}

TEST_CASE("ranks started with different settings are refused") {
  TrainSettings settings = tiny_settings(8);
  if (job().rank() == 1) settings.lr *= 2;
  const std::string message = job_error_of(
      [&] { TrainingRun::start(char_level_data(tiny_corpus()), config_with_batch(2), settings, job()); });
  CHECK(message.find("rank 1 of 2 was started with other settings") != std::string::npos);
}

}  // namespace tg::testing

int main(int argc, char** argv) {
  tg::dist::enable_mpi_jobs();
  tg::dist::Communicator& job = tg::dist::join_job();
  doctest::Context context(argc, argv);
  const int failures = context.run();
  // Each rank reports its own cases; the job fails when any rank does.
  double failed[1] = {static_cast<double>(failures != 0)};
  job.all_reduce_sum(std::span<double>(failed));
  return failed[0] > 0 ? 1 : 0;
}
