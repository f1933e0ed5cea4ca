// Training: batches, the loop, resuming bit for bit, stopping on a NaN, the metrics log.
#include <doctest/doctest.h>

#include <fstream>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "tinygpt/datasets/data.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/training/train.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

TrainOutputs with_metrics(const ScratchDir& dir) {
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.metrics_path = dir.file("metrics.jsonl");
  return outputs;
}

}  // namespace

TEST_CASE("split_by_position: the first 90% trains, the rest validates, in order") {
  std::vector<int64_t> ids(20);
  std::iota(ids.begin(), ids.end(), 0);
  const TokenSplits splits = split_by_position(ids);
  CHECK(splits.train.ids(0, 18) == std::vector<int64_t>(ids.begin(), ids.begin() + 18));
  CHECK(splits.val.ids(0, 2) == std::vector<int64_t>{18, 19});
  CHECK_THROWS_WITH_AS(splits.val.ids(1, 2), doctest::Contains("tokens 1 to 3 are out of range"), tg::Error);
  CHECK_THROWS_WITH_AS(split_by_position(ids, 1.0), doctest::Contains("train fraction 1"), tg::Error);
}

TEST_CASE("sample_batch: targets are the inputs shifted by one, windows are contiguous") {
  std::vector<int64_t> ids(50);
  std::iota(ids.begin(), ids.end(), 100);  // id = 100 + position, so a window is a run of consecutive numbers
  const TokenSplit split("train", ids);
  Generator generator(3);
  const Batch batch = split.sample_batch(4, 6, generator);
  REQUIRE(batch.inputs.shape() == Shape{4, 6});
  REQUIRE(batch.targets.shape() == Shape{4, 6});
  const auto inputs = batch.inputs.to_vector<int64_t>(), targets = batch.targets.to_vector<int64_t>();
  for (int64_t row = 0; row < 4; ++row) {
    const int64_t start = inputs[row * 6];
    CHECK(start >= 100);
    CHECK(start + 6 <= 149);  // the last target is still inside the split
    for (int64_t t = 0; t < 6; ++t) {
      CHECK(inputs[row * 6 + t] == start + t);
      CHECK(targets[row * 6 + t] == start + t + 1);
    }
  }
  CHECK(generator.counter() == 4);  // one draw per row: the batches of a run depend only on the count

  Generator same(3);
  CHECK(split.sample_batch(4, 6, same).inputs.to_vector<int64_t>() == inputs);
}

TEST_CASE("sample_batch: a split shorter than one window is an error naming it") {
  const TokenSplit split("val", {1, 2, 3, 4});
  Generator generator(0);
  CHECK_THROWS_WITH_AS(split.sample_batch(2, 4, generator), doctest::Contains("the val split has 4 tokens"), tg::Error);
  CHECK_NOTHROW(split.sample_batch(2, 3, generator));  // exactly one window of 3 + 1
}

TEST_CASE("train: a tiny model learns the tiny corpus") {
  ScratchDir dir;
  TrainSettings settings = tg::testing::tiny_settings(40);
  settings.lr = 1e-2;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings);
  std::ostringstream progress;
  const TrainResult result = run->train(with_metrics(dir), progress);
  CHECK(result.steps == 40);
  REQUIRE(result.step_losses.size() == 40);
  // A uniform guess scores ln(V) = 3.1; 40 steps learn the character frequencies and more.
  CHECK(result.last_val_loss < std::log(static_cast<double>(run->state().config.vocab_size)) - 0.5);
  CHECK(result.best_val_loss <= result.last_val_loss);
  CHECK(std::filesystem::exists(dir.file("model.safetensors")));
  CHECK(std::filesystem::exists(dir.file("best.safetensors")));
  CHECK(progress.str().find("eval step 40 | train loss") != std::string::npos);
  CHECK(progress.str().find("step 40/40 | loss") != std::string::npos);
}

TEST_CASE("train: the metrics log has one JSON object per step and per evaluation") {
  ScratchDir dir;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), tg::testing::tiny_settings(8));
  std::ostringstream progress;
  run->train(with_metrics(dir), progress);
  std::ifstream log(dir.file("metrics.jsonl"));
  std::string line;
  int steps = 0, evaluations = 0;
  while (std::getline(log, line)) {
    const auto record = nlohmann::json::parse(line);
    CHECK(record.contains("iter"));
    CHECK(record.contains("train_loss"));
    CHECK(record.contains("lr"));
    CHECK(record.contains("tokens_per_s"));
    if (record.value("eval", false)) {
      CHECK(record.contains("val_loss"));
      ++evaluations;
    } else {
      CHECK(record["iter"].get<int64_t>() == ++steps);
    }
  }
  CHECK(steps == 8);
  CHECK(evaluations == 3);  // steps 0, 4 and 8
}

TEST_CASE("train --resume: an interrupted run continues with exactly the same losses") {
  // With dropout, so that the dropout generator's state must be restored too.
  const GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Learned, 0.1);
  const TrainSettings settings = tg::testing::tiny_settings(12);
  std::ostringstream progress;

  ScratchDir straight_dir;
  auto straight = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings);
  const TrainResult uninterrupted = straight->train(tg::testing::outputs_in(straight_dir.path()), progress);
  REQUIRE(uninterrupted.step_losses.size() == 12);

  for (const int64_t stop : {6, 8}) {  // between evaluations, and right at one
    CAPTURE(stop);
    ScratchDir dir;
    const TrainOutputs first_part = tg::testing::outputs_in(dir.path(), stop);
    const TrainResult before = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings)->train(first_part, progress);
    REQUIRE(before.step_losses.size() == static_cast<size_t>(stop));

    const Checkpoint checkpoint = load_checkpoint(dir.file("model.safetensors"));
    CHECK(checkpoint.header.step == stop);
    auto resumed = TrainingRun::resume(checkpoint, char_level_data(tg::testing::tiny_corpus()), checkpoint.header.settings);
    const TrainResult after = resumed->train(tg::testing::outputs_in(dir.path()), progress);
    CHECK(after.steps == 12);

    std::vector<double> losses = before.step_losses;
    losses.insert(losses.end(), after.step_losses.begin(), after.step_losses.end());
    CHECK(losses == uninterrupted.step_losses);  // bitwise
    const auto final_weights = resumed->model().named_parameters();
    const auto expected_weights = straight->model().named_parameters();
    for (size_t i = 0; i < final_weights.size(); ++i) {
      CAPTURE(final_weights[i].first);
      CHECK(final_weights[i].second.to_vector<float>() == expected_weights[i].second.to_vector<float>());
    }
    CHECK(after.best_val_loss == uninterrupted.best_val_loss);
  }
}

TEST_CASE("train: a NaN loss stops the run with a message naming the step") {
  ScratchDir dir;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), tg::testing::tiny_settings(8));
  const TrainOutputs outputs = tg::testing::outputs_in(dir.path(), 2);
  std::ostringstream progress;
  run->train(outputs, progress);
  for (const auto& [name, parameter] : run->model().named_parameters()) {
    if (name == "wte.weight") fill_(parameter, std::nan(""));
  }
  CHECK_THROWS_WITH_AS(run->train(tg::testing::outputs_in(dir.path()), progress),
                       doctest::Contains("the loss is NaN at step 3"), tg::Error);
}

TEST_CASE("train: errors name the setting") {
  TrainSettings settings = tg::testing::tiny_settings();
  settings.min_lr = 1;
  CHECK_THROWS_WITH_AS(TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings),
                       doctest::Contains("--min-lr must be a number from 0 to --lr (0.003), got 1"), tg::Error);
  GPTConfig config = tg::testing::tiny_config();
  config.block_size = 4000;  // longer than the validation split
  CHECK_THROWS_WITH_AS(TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, tg::testing::tiny_settings()),
                       doctest::Contains("too few for one window"), tg::Error);
}

TEST_CASE("train: diverged weights are never saved, and the run does not end as done") {
  // lr 1e38: the first update throws the weights to about 1e38, so the final
  // evaluation's loss is not finite. The run must fail there, not overwrite the
  // step-0 checkpoint with those weights and report success.
  ScratchDir dir;
  TrainSettings settings = tg::testing::tiny_settings(1);
  settings.lr = 1e38;
  settings.min_lr = 0;
  settings.warmup = 0;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings);
  std::ostringstream progress;
  CHECK_THROWS_WITH_AS(run->train(tg::testing::outputs_in(dir.path()), progress),
                       doctest::Contains("the weights have diverged, so they were not saved"), tg::Error);
  const Checkpoint latest = load_checkpoint(dir.file(kLatestCheckpointFile));
  CHECK(latest.header.step == 0);  // the evaluation at step 0 wrote it; step 1 did not
  GPT model(latest.header.config, 0, DType::Float32, /*initialize=*/false);
  restore_parameters(latest, model);
  for (const auto& [name, parameter] : model.named_parameters())
    for (const float value : parameter.to_vector<float>()) REQUIRE(std::isfinite(value));
}

TEST_CASE("train: temporary files left by a killed save are removed when the run starts or resumes") {
  ScratchDir dir;
  const std::string stale = dir.file(std::string(kLatestCheckpointFile) + ".tmp.4999999.7");  // no such process
  std::ofstream(stale) << "half a checkpoint";
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), tg::testing::tiny_settings(2));
  std::ostringstream progress;
  run->train(tg::testing::outputs_in(dir.path()), progress);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(progress.str().find("removed 1 temporary file left by an interrupted save") != std::string::npos);
}

TEST_CASE("train: the temporary file of a metrics log whose cut-back was killed is removed too") {
  ScratchDir dir;
  // A resume killed while rewriting the log (write_file_atomically) leaves METRICS.tmp.PID.N.
  const std::string stale = dir.file("metrics.jsonl.tmp.4999999.0");  // no such process
  std::ofstream(stale) << "{\"iter\": 1, \"train_loss\": 1.0}\n";
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), tg::testing::tiny_settings(2));
  std::ostringstream progress;
  run->train(with_metrics(dir), progress);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK(progress.str().find("removed 1 temporary file left by an interrupted save of " + dir.file("metrics.jsonl")) !=
        std::string::npos);
}

TEST_CASE("train --resume: the metrics log is cut back to the checkpoint, without repeated steps or a torn line") {
  ScratchDir dir;
  TrainOutputs outputs = with_metrics(dir);
  outputs.stop_after = 4;
  TrainSettings settings = tg::testing::tiny_settings(6);
  settings.eval_interval = 2;
  std::ostringstream progress;
  TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings)->train(outputs, progress);
  // The run then went on to step 5 and was killed while writing step 6's line.
  std::ofstream(dir.file("metrics.jsonl"), std::ios::app) << "{\"iter\": 5, \"train_loss\": 1.0}\n{\"iter\": 6, \"tr";

  auto resumed = TrainingRun::resume(load_checkpoint(dir.file(kLatestCheckpointFile)), char_level_data(tg::testing::tiny_corpus()),
                                     settings);
  outputs.stop_after = -1;
  resumed->train(outputs, progress);
  std::ifstream log(dir.file("metrics.jsonl"));
  std::string line;
  std::vector<int64_t> steps;
  while (std::getline(log, line)) {
    const nlohmann::json record = nlohmann::json::parse(line);  // throws on a torn line
    if (!record.value("eval", false)) steps.push_back(record["iter"].get<int64_t>());
  }
  CHECK(steps == std::vector<int64_t>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("train: a metrics log that cannot be written (a full disk) stops the run, naming it") {
  ScratchDir dir;
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.metrics_path = "/dev/full";  // every write fails with ENOSPC
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), tg::testing::tiny_settings(2));
  std::ostringstream progress;
  CHECK_THROWS_WITH_AS(run->train(outputs, progress),
                       doctest::Contains("cannot write the metrics log '/dev/full' (is the disk full?)"), tg::Error);
}

TEST_CASE("train: the same losses and weights on 1, 2 and 3 threads (so the thread count may change between steps)") {
  // Wide enough (64 channels, batch 8 x 64 positions) that LayerNorm, GELU,
  // the reductions and the products all run their parallel paths.
  GPTConfig config = tg::testing::tiny_config();
  config.n_embd = 64;
  config.block_size = 64;
  config.batch_size = 8;
  const TrainSettings settings = tg::testing::tiny_settings(4);
  const int threads_before = thread_ceiling();
  std::vector<TrainResult> results;
  std::vector<std::vector<std::vector<float>>> weights;
  set_num_threads(3);  // the ceiling, fixed for a run; the count moves below it, as the thread governor moves it
  for (int threads : {1, 2, 3}) {
    use_threads(threads);
    ScratchDir dir;
    std::ostringstream progress;
    auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings);
    results.push_back(run->train(tg::testing::outputs_in(dir.path()), progress));
    weights.emplace_back();
    for (const auto& [name, parameter] : run->model().named_parameters()) weights.back().push_back(parameter.to_vector<float>());
  }
  set_num_threads(threads_before);
  for (size_t index = 1; index < results.size(); ++index) {
    CAPTURE(index + 1);
    CHECK(results[index].step_losses == results[0].step_losses);  // bitwise
    CHECK(weights[index] == weights[0]);
  }
}
