// A run asked to stop (Ctrl-C in the CLI), --save-interval, the schedule's end
// (decay_iters) and the data a checkpoint records.
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <sstream>
#include <streambuf>

#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/train.h"
#include "tinygpt/datasets/training_data.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

// A progress stream that raises `flag` once `text` has been written to it: a stand-in for
// a Ctrl-C that comes at a known moment of the run.
class RaiseFlagOn : public std::streambuf {
 public:
  RaiseFlagOn(std::atomic<bool>& flag, std::string text) : flag_(flag), text_(std::move(text)) {}

 protected:
  int overflow(int character) override {
    if (character != EOF) {
      seen_.push_back(static_cast<char>(character));
      if (seen_.find(text_) != std::string::npos) flag_ = true;
    }
    return character;
  }

 private:
  std::atomic<bool>& flag_;
  std::string text_, seen_;
};

TrainingData corpus_from(const std::string& path, const std::string& text) {
  TrainingData data = char_level_data(text);
  data.source = text_source(path, text);
  return data;
}

}  // namespace

TEST_CASE("train: a run asked to stop ends the step under way, saves it and resumes to the same losses") {
  const GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Learned, 0.1);
  const TrainSettings settings = tg::testing::tiny_settings(12);
  std::ostringstream progress;
  ScratchDir straight_dir;
  const TrainResult uninterrupted = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings)
                                        ->train(tg::testing::outputs_in(straight_dir.path()), progress);

  ScratchDir dir;
  std::atomic<bool> stop{false};
  RaiseFlagOn raise_on_eval(stop, "eval step 4 ");  // asked while step 4's evaluation is reported
  std::ostream stopping_progress(&raise_on_eval);
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.stop_requested = &stop;
  const TrainResult before =
      TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings)->train(outputs, stopping_progress);
  CHECK(before.interrupted);
  CHECK(before.saved_at_stop);
  CHECK(before.steps == 5);  // step 5 was under way when asked: it ends, nothing after it starts
  const Checkpoint checkpoint = load_checkpoint(dir.file(kLatestCheckpointFile));
  CHECK(checkpoint.header.step == 5);

  const TrainResult after = TrainingRun::resume(checkpoint, char_level_data(tg::testing::tiny_corpus()),
                                                checkpoint.header.settings)
                                ->train(tg::testing::outputs_in(dir.path()), progress);
  std::vector<double> losses = before.step_losses;
  losses.insert(losses.end(), after.step_losses.begin(), after.step_losses.end());
  CHECK(losses == uninterrupted.step_losses);  // bitwise
}

TEST_CASE("train: a new run asked to stop during its first evaluation saves nothing") {
  ScratchDir dir;
  std::atomic<bool> stop{true};
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.stop_requested = &stop;
  std::ostringstream progress;
  const TrainResult result = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(),
                                                tg::testing::tiny_settings(4))
                                 ->train(outputs, progress);
  CHECK(result.interrupted);
  CHECK_FALSE(result.saved_at_stop);
  CHECK(result.steps == 0);
  CHECK_FALSE(std::filesystem::exists(dir.file(kLatestCheckpointFile)));
}

// The step DIR/model.safetensors holds when the progress line of step 10 is printed.
int64_t saved_step_at_step_10(int64_t save_interval) {
  ScratchDir dir;
  TrainSettings settings = tg::testing::tiny_settings(12);
  settings.eval_interval = 100;  // evaluations (and their saves) at steps 0 and 12 only
  settings.save_interval = save_interval;
  int64_t saved_step = -1;
  class ReadCheckpointOn : public std::streambuf {
   public:
    ReadCheckpointOn(std::string path, int64_t& step) : path_(std::move(path)), step_(step) {}

   protected:
    int overflow(int character) override {
      if (character == EOF) return character;
      seen_.push_back(static_cast<char>(character));
      if (step_ < 0 && seen_.find("step 10/12") != std::string::npos) step_ = load_checkpoint(path_).header.step;
      return character;
    }

   private:
    std::string path_, seen_;
    int64_t& step_;
  } reader(dir.file(kLatestCheckpointFile), saved_step);
  std::ostream progress(&reader);
  TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings)
      ->train(tg::testing::outputs_in(dir.path()), progress);
  return saved_step;
}

TEST_CASE("train: --save-interval writes the latest checkpoint between evaluations") {
  CHECK(saved_step_at_step_10(0) == 0);  // only step 0's evaluation has saved
  CHECK(saved_step_at_step_10(3) == 9);
  CHECK(saved_step_at_step_10(5) == 5);  // step 10 is saved before step 11 starts, after this line
}

TEST_CASE("TrainSettings: decay_iters and min_lr default to iters and lr / 10; older checkpoints decay to their iters") {
  TrainSettings settings;
  settings.iters = 500;
  settings.lr = 1e-3;
  settings.resolve_defaults();
  CHECK(settings.decay_iters == 500);
  CHECK(settings.min_lr == doctest::Approx(1e-4));

  nlohmann::json old = settings.to_json();
  old.erase("decay_iters");
  old.erase("save_interval");
  old["iters"] = 300;
  const TrainSettings read = TrainSettings::from_json(old);
  CHECK(read.decay_iters == 300);
  CHECK(read.save_interval == 0);
}

TEST_CASE("train --resume: past decay_iters the learning rate holds at min_lr") {
  ScratchDir dir;
  TrainSettings settings = tg::testing::tiny_settings(6);
  settings.warmup = 0;
  settings.decay_iters = 6;
  std::ostringstream progress;
  TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings)
      ->train(tg::testing::outputs_in(dir.path()), progress);
  const Checkpoint checkpoint = load_checkpoint(dir.file(kLatestCheckpointFile));
  TrainSettings longer = checkpoint.header.settings;
  longer.iters = 10;
  auto resumed = TrainingRun::resume(checkpoint, char_level_data(tg::testing::tiny_corpus()), longer);
  CHECK(resumed->state().settings.decay_iters == 6);
  TrainOutputs outputs = tg::testing::outputs_in(dir.path());
  outputs.metrics_path = dir.file("metrics.jsonl");
  resumed->train(outputs, progress);
  std::ifstream log(outputs.metrics_path);
  int steps_at_min_lr = 0;
  for (std::string line; std::getline(log, line);) {
    const nlohmann::json entry = nlohmann::json::parse(line);
    if (entry.contains("eval")) continue;
    CHECK(entry["lr"].get<double>() == settings.min_lr);
    ++steps_at_min_lr;
  }
  CHECK(steps_at_min_lr == 4);
}

TEST_CASE("checkpoint: the run's data is recorded; resuming on other data forgets the best val loss") {
  ScratchDir dir;
  const std::string text = tg::testing::tiny_corpus();
  std::ostringstream progress;
  TrainingRun::start(corpus_from("corpus.txt", text), tg::testing::tiny_config(), tg::testing::tiny_settings(4))
      ->train(tg::testing::outputs_in(dir.path()), progress);
  const Checkpoint checkpoint = load_checkpoint(dir.file(kLatestCheckpointFile));
  REQUIRE(checkpoint.header.data.has_value());
  CHECK(checkpoint.header.data->kind == "text");
  CHECK(checkpoint.header.data->bytes == static_cast<int64_t>(text.size()));
  CHECK(checkpoint.header.data->same_data(text_source("moved/elsewhere.txt", text)));
  CHECK(std::isfinite(checkpoint.header.best_val_loss));

  auto same = TrainingRun::resume(checkpoint, corpus_from("corpus.txt", text), checkpoint.header.settings);
  CHECK(same->state().best_val_loss == checkpoint.header.best_val_loss);
  // The same text where it now lies: the best stays, and the record follows the file.
  auto moved = TrainingRun::resume(checkpoint, corpus_from("moved/corpus.txt", text), checkpoint.header.settings);
  CHECK(moved->state().best_val_loss == checkpoint.header.best_val_loss);
  CHECK(moved->state().data->path.find("moved/corpus.txt") != std::string::npos);
  // A checkpoint that recorded no data (an older tinygpt) keeps its best and records what it resumes on.
  Checkpoint unrecorded = load_checkpoint(dir.file(kLatestCheckpointFile));
  unrecorded.header.data.reset();
  auto adopted = TrainingRun::resume(unrecorded, corpus_from("corpus.txt", text), unrecorded.header.settings);
  CHECK(adopted->state().best_val_loss == checkpoint.header.best_val_loss);
  CHECK(adopted->state().data.has_value());

  std::string other = text;
  other[10] = other[11];
  const DataSource other_source = text_source("corpus.txt", other);
  CHECK_FALSE(checkpoint.header.data->same_data(other_source));
  auto changed = TrainingRun::resume(checkpoint, corpus_from("corpus.txt", other), checkpoint.header.settings);
  CHECK(std::isinf(changed->state().best_val_loss));
  CHECK(changed->state().data->xxh3 == other_source.xxh3);
}

TEST_CASE("DataSource: a damaged record is refused, naming it") {
  const nlohmann::json good = text_source("a.txt", "abc").to_json();
  CHECK(DataSource::from_json(good, "x").same_data(text_source("b.txt", "abc")));
  nlohmann::json bad = good;
  bad["xxh3"] = "not hex";
  CHECK_THROWS_WITH_AS(DataSource::from_json(bad, "the 'data' metadata"), doctest::Contains("16 hex digits"), tg::Error);
  bad = good;
  bad["bytes"] = -1;
  CHECK_THROWS_WITH_AS(DataSource::from_json(bad, "the 'data' metadata"), doctest::Contains("'bytes'"), tg::Error);
  CHECK_THROWS_WITH_AS(DataSource::from_json(nlohmann::json::array(), "the 'data' metadata"),
                       doctest::Contains("not a JSON object"), tg::Error);
}
