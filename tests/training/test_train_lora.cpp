// A LoRA training run (train --init-from DIR --lora-rank R): only the adapters
// change, they reach PEFT's files in the run's directory, and a resumed run
// continues with exactly the losses of one that never stopped.
#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <sstream>

#include "tinygpt/datasets/data.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/models/lora_files.h"
#include "tinygpt/nn/optim/optimizer.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/training/train.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

std::string repeated(const std::string& text) {
  std::string all;
  for (int i = 0; i < 40; ++i) all += text;
  return all;
}

// A base model trained for a few steps, and the settings of a LoRA run on it.
struct LoraSetup {
  std::unique_ptr<GPT> base;
  TrainingData data = char_level_data(tg::testing::tiny_corpus());
  // What the adapters learn: the base's words in another order, which it predicts poorly.
  TrainingData new_text = tokenized_text_data(repeated("the question: that is to be, or not to be\nWhether 'tis nobler\n"),
                                              data.tokenizer);
  TrainSettings settings = tg::testing::tiny_settings(8);
  LoraSetup(double dropout = 0.0) {
    ScratchDir dir;
    // Trained far enough that its (tied, frozen) head gives logits a range the adapters can steer.
    TrainSettings base_settings = tg::testing::tiny_settings(300);
    base_settings.lr = 1e-2;
    base_settings.eval_interval = 300;
    auto run = TrainingRun::start(data, tg::testing::tiny_config(), base_settings);
    std::ostringstream progress;
    run->train(tg::testing::outputs_in(dir.path()), progress);
    base = std::make_unique<GPT>(run->model().config(), 0, DType::Float32, /*initialize=*/false);
    restore_parameters(load_checkpoint(dir.file(kLatestCheckpointFile)), *base);
    settings.lora_rank = 4;
    settings.lora_alpha = 4;
    settings.lora_dropout = dropout;
    settings.lora_targets = "all-linear";
    settings.init_from = "the base";
    settings.lr = 1e-2;
    settings.min_lr = 1e-3;
  }
  std::unique_ptr<TrainingRun> start() const {
    GPTConfig config = base->config();
    config.batch_size = 16;  // batches large enough that each step's direction is the text's, not a window's
    return TrainingRun::start_from(*base, data.tokenizer, new_text, config, settings);
  }
};

std::map<std::string, std::vector<float>> values_of(const GPT& model) {
  std::map<std::string, std::vector<float>> values;
  for (const auto& [name, parameter] : model.named_parameters()) values[name] = parameter.to_vector<float>();
  return values;
}

}  // namespace

TEST_CASE("train with LoRA: the base stays as it was, the adapters learn and are saved in PEFT's layout") {
  LoraSetup setup;
  setup.settings.iters = 40;
  setup.settings.eval_interval = 20;
  const std::map<std::string, std::vector<float>> base = values_of(*setup.base);
  auto run = setup.start();
  ScratchDir dir;
  std::ostringstream progress;
  // The loss on the first 64 ids of the new text, as eight windows of the block size.
  const std::vector<int64_t> ids = setup.new_text.splits.train.ids(0, 65);
  const Tensor inputs = from_vector<int64_t>(std::vector<int64_t>(ids.begin(), ids.end() - 1), {8, 8});
  const Tensor targets = from_vector<int64_t>(std::vector<int64_t>(ids.begin() + 1, ids.end()), {8, 8});
  auto loss = [&] { return run->model().loss(inputs, targets).item<double>(); };
  const double before = loss();
  run->train(tg::testing::outputs_in(dir.path()), progress);
  CHECK(loss() < before - 0.1);
  int64_t adapters = 0;
  for (const auto& [name, values] : values_of(run->model())) {
    if (name.find(".lora.") == std::string::npos) {
      CHECK_MESSAGE(values == base.at(name), name, " changed");
    } else {
      ++adapters;
      CHECK(std::any_of(values.begin(), values.end(), [](float value) { return value != 0; }));
    }
  }
  CHECK(adapters > 0);
  CHECK(run->optimizer().adamw().state().m.numel() < setup.base->parameter_count() / 2);  // adapters' moments only

  // The best checkpoint's adapters are in DIR as PEFT writes them, and read back onto the base.
  REQUIRE(is_peft_adapter_directory(dir.path()));
  GPT reloaded(setup.base->config(), 0, DType::Float32, /*initialize=*/false);
  restore_parameters(load_checkpoint(dir.file(kBestCheckpointFile)), reloaded);
  REQUIRE(reloaded.lora().has_value());
  GPT applied(setup.base->config(), 0, DType::Float32, /*initialize=*/false);
  for (const auto& [name, parameter] : applied.named_parameters())
    raw::copy_(parameter, from_vector<float>(base.at(name), parameter.shape()));
  load_peft_adapter(dir.path(), applied);
  CHECK(values_of(applied) == values_of(reloaded));
}

TEST_CASE("train with LoRA: a resumed run takes the steps of one that never stopped, dropout included") {
  const LoraSetup setup(0.25);
  std::ostringstream progress;
  ScratchDir whole_dir, parts_dir;
  const TrainResult whole = setup.start()->train(tg::testing::outputs_in(whole_dir.path()), progress);

  setup.start()->train(tg::testing::outputs_in(parts_dir.path(), 3), progress);
  auto resumed = TrainingRun::resume(load_checkpoint(parts_dir.file(kLatestCheckpointFile)), setup.new_text, setup.settings);
  REQUIRE(resumed->model().lora().has_value());
  const TrainResult rest = resumed->train(tg::testing::outputs_in(parts_dir.path()), progress);
  REQUIRE(rest.step_losses.size() == whole.step_losses.size() - 3);
  for (size_t i = 0; i < rest.step_losses.size(); ++i) CHECK(rest.step_losses[i] == whole.step_losses[i + 3]);
}

TEST_CASE("train with LoRA: refused from scratch and with Muon") {
  TrainSettings settings = tg::testing::tiny_settings(2);
  settings.lora_rank = 2;
  CHECK_THROWS_WITH(TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings),
                    doctest::Contains("--init-from"));
  settings.optimizer = "muon";
  CHECK_THROWS_WITH(settings.validate(), doctest::Contains("they train with adamw"));
}

TEST_CASE("start_from on the model itself trains it in place, with the steps of a run on a copy") {
  const LoraSetup setup(0.25);
  std::ostringstream progress;
  ScratchDir copied_dir, adopted_dir;
  auto copied = setup.start();
  auto own = std::make_unique<GPT>(setup.base->config(), 99, DType::Float32, /*initialize=*/false);
  for (const auto& [name, parameter] : own->named_parameters())
    for (const auto& [base_name, value] : setup.base->named_parameters())
      if (name == base_name) raw::copy_(parameter, value);
  own->eval();  // as load_model hands it over
  const GPT* address = own.get();
  GPTConfig config = setup.base->config();
  config.batch_size = 16;
  auto adopted = TrainingRun::start_from(std::move(own), setup.data.tokenizer, setup.new_text, config, setup.settings);
  CHECK(&adopted->model() == address);
  const TrainResult a = copied->train(tg::testing::outputs_in(copied_dir.path()), progress);
  const TrainResult b = adopted->train(tg::testing::outputs_in(adopted_dir.path()), progress);
  CHECK(a.step_losses == b.step_losses);
}
