// Training beyond the char-level demo: any tokenizer, gradient accumulation,
// and fine-tuning from existing weights.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "tinygpt/training/checkpoint.h"
#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/datasets/prepare_tokens.h"
#include "tinygpt/training/load_model.h"
#include "tinygpt/training/train.h"
#include "tinygpt/datasets/training_data.h"
#include "tinygpt/tensor/factory.h"
#include "tests/models/test_train_helpers.h"
#include "tinygpt/tokenizer/bpe_trainer.h"
#include "tinygpt/tokenizer/gpt2_files.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

const std::filesystem::path kGpt2Vocab = "../shared/data/gpt2";

// The largest |a - b| over all the tensors, relative to the largest |a|. Over
// the whole model, not tensor by tensor: some gradients are zero in exact
// arithmetic (a key bias shifts every score of a row alike, which softmax
// ignores), so theirs is rounding noise that only a global scale measures fairly.
double relative_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double difference = 0, scale = 0;
  for (size_t t = 0; t < a.size(); ++t) {
    const std::vector<float> left = a[t].to_vector<float>(), right = b[t].to_vector<float>();
    for (size_t i = 0; i < left.size(); ++i) {
      difference = std::max(difference, std::abs(static_cast<double>(left[i]) - right[i]));
      scale = std::max(scale, std::abs(static_cast<double>(left[i])));
    }
  }
  return difference / std::max(scale, 1e-30);
}

std::vector<Tensor> weights_of(const GPT& model) {
  std::vector<Tensor> weights;
  for (const auto& [name, parameter] : model.named_parameters()) weights.push_back(parameter);
  return weights;
}

std::vector<Tensor> gradients_of(const GPT& model) {
  std::vector<Tensor> gradients;
  for (const auto& [name, parameter] : model.named_parameters()) gradients.push_back(parameter.grad());
  return gradients;
}

// A small byte-level BPE learned from the tiny corpus.
tokenizer::TextTokenizer tiny_bpe() {
  return tokenizer::TextTokenizer(
      tokenizer::Gpt2Tokenizer(tokenizer::train_bpe(tg::testing::tiny_corpus(), {.vocab_size = 257 + 40})));
}

}  // namespace

TEST_CASE("train --grad-accum: two micro-batches of B give the step of one batch of 2B") {
  std::ostringstream progress;
  GPTConfig one_batch = tg::testing::tiny_config();
  one_batch.batch_size = 6;
  GPTConfig two_micro_batches = tg::testing::tiny_config();
  two_micro_batches.batch_size = 3;
  TrainSettings settings = tg::testing::tiny_settings(1);
  ScratchDir big_dir, accumulated_dir;
  auto big = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), one_batch, settings);
  const TrainResult big_result = big->train(tg::testing::outputs_in(big_dir.path()), progress);
  settings.grad_accum = 2;
  auto accumulated = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), two_micro_batches, settings);
  const TrainResult accumulated_result = accumulated->train(tg::testing::outputs_in(accumulated_dir.path()), progress);

  REQUIRE(big_result.step_losses.size() == 1);
  REQUIRE(accumulated_result.step_losses.size() == 1);
  CHECK(accumulated_result.step_losses[0] == doctest::Approx(big_result.step_losses[0]).epsilon(1e-6));
  // The gradients of the step (left in the arena) and the weights after it.
  const double gradients = relative_difference(gradients_of(big->model()), gradients_of(accumulated->model()));
  const double weights = relative_difference(weights_of(big->model()), weights_of(accumulated->model()));
  MESSAGE("relative difference after one step: gradients " << gradients << ", weights " << weights);
  CHECK(gradients <= 1e-6);
  CHECK(weights <= 1e-6);
  // And they did move: the comparison is not between two untouched models.
  const auto untouched = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), one_batch, settings);
  CHECK(relative_difference(weights_of(untouched->model()), weights_of(big->model())) > 1e-3);
}

TEST_CASE("train --grad-accum: the setting is checked and saved in checkpoints") {
  TrainSettings settings = tg::testing::tiny_settings(2);
  settings.grad_accum = 0;
  CHECK_THROWS_WITH_AS(settings.validate(), doctest::Contains("--grad-accum must be a positive integer, got 0"),
                       tg::Error);
  settings.grad_accum = 3;
  CHECK(TrainSettings::from_json(settings.to_json()).grad_accum == 3);
  // A checkpoint written before the setting existed trains without accumulation.
  nlohmann::json older = settings.to_json();
  older.erase("grad_accum");
  CHECK(TrainSettings::from_json(older).grad_accum == 1);
}

TEST_CASE("train: a BPE model trains on text encoded in memory; its checkpoint carries the tokenizer") {
  ScratchDir dir;
  std::ostringstream progress;
  const tokenizer::TextTokenizer bpe = tiny_bpe();
  auto run = TrainingRun::start(tokenized_text_data(tg::testing::tiny_corpus(), bpe), tg::testing::tiny_config(),
                                tg::testing::tiny_settings(4));
  CHECK(run->state().config.vocab_size == bpe.vocab_size());
  const TrainResult result = run->train(tg::testing::outputs_in(dir.path()), progress);
  CHECK(std::isfinite(result.best_val_loss));

  const Checkpoint checkpoint = load_checkpoint(dir.file(kLatestCheckpointFile));
  const tokenizer::TextTokenizer restored = tokenizer::TextTokenizer::from_json(checkpoint.header.tokenizer);
  CHECK(std::string(restored.kind()) == "gpt2");
  CHECK(restored.vocab_size() == bpe.vocab_size());
  CHECK(restored.encode(tg::testing::tiny_corpus()) == bpe.encode(tg::testing::tiny_corpus()));
  CHECK(restored.to_json() == bpe.to_json());

  // Resuming on data tokenised differently is refused: the same ids would mean other text.
  CHECK_THROWS_WITH_AS(
      TrainingRun::resume(checkpoint, char_level_data(tg::testing::tiny_corpus()), checkpoint.header.settings),
      doctest::Contains("trained with a different gpt2 tokenizer"), tg::Error);
  // With the checkpoint's own tokenizer it continues.
  auto resumed = TrainingRun::resume(checkpoint, tokenized_text_data(tg::testing::tiny_corpus(), restored),
                                     checkpoint.header.settings);
  CHECK(resumed->state().step == 4);
}

TEST_CASE("train: start_from copies the weights, crops the position table, and refuses another tokenizer") {
  std::ostringstream progress;
  ScratchDir dir;
  const TrainingData data = char_level_data(tg::testing::tiny_corpus());
  auto source = TrainingRun::start(data, tg::testing::tiny_config(), tg::testing::tiny_settings(2));
  source->train(tg::testing::outputs_in(dir.path()), progress);
  const GPT& initial = source->model();

  GPTConfig shorter = initial.config();
  shorter.block_size = 5;
  shorter.dropout = 0.1;
  auto tuned = TrainingRun::start_from(initial, data.tokenizer, data, shorter, tg::testing::tiny_settings(2));
  const auto copied = tuned->model().named_parameters();
  const auto original = initial.named_parameters();
  for (size_t i = 0; i < copied.size(); ++i) {
    CAPTURE(copied[i].first);
    const std::vector<float> values = copied[i].second.to_vector<float>();
    std::vector<float> expected = original[i].second.to_vector<float>();
    if (copied[i].first == "wpe.weight") {
      CHECK(copied[i].second.shape() == Shape{5, initial.config().n_embd});
      expected.resize(values.size());  // the first 5 rows
    }
    CHECK(values == expected);
  }
  CHECK(tuned->state().config.dropout == 0.1);
  CHECK(tuned->state().step == 0);

  GPTConfig longer = initial.config();
  longer.block_size = initial.config().block_size + 1;
  CHECK_THROWS_WITH_AS(TrainingRun::start_from(initial, data.tokenizer, data, longer, tg::testing::tiny_settings(2)),
                       doctest::Contains("is longer than the context of the model to start from"), tg::Error);
  CHECK_THROWS_WITH_AS(TrainingRun::start_from(initial, data.tokenizer,
                                               tokenized_text_data(tg::testing::tiny_corpus(), tiny_bpe()),
                                               initial.config(), tg::testing::tiny_settings(2)),
                       doctest::Contains("was trained with a different char tokenizer"), tg::Error);
}

TEST_CASE("train: fine-tuning the tiny GPT-2 fixture lowers its loss; the export loads back with the same loss") {
  if (!std::filesystem::exists(kGpt2Vocab / "encoder.json")) {
    MESSAGE("skipped: no GPT-2 vocabulary files in " << kGpt2Vocab);
    return;
  }
  const tokenizer::TextTokenizer gpt2(tokenizer::Gpt2Tokenizer::load(kGpt2Vocab));
  const std::unique_ptr<GPT> fixture = load_hf_gpt2("tests/fixtures/hf_gpt2");
  GPTConfig config = fixture->config();
  config.block_size = 32;
  config.batch_size = 4;
  config.dropout = 0;
  TrainSettings settings = tg::testing::tiny_settings(12);
  settings.lr = 1e-2;
  settings.eval_interval = 12;
  settings.eval_iters = 4;
  ScratchDir dir;
  std::ostringstream progress;
  auto run = TrainingRun::start_from(*fixture, gpt2, tokenized_text_data(tg::testing::tiny_corpus(), gpt2), config,
                                     settings);
  const Evaluation before = run->evaluate();
  run->train(tg::testing::outputs_in(dir.path()), progress);
  const Evaluation after = run->evaluate();
  CHECK(after.train_loss < before.train_loss - 1.0);  // a repeated verse is quickly learned
  CHECK(after.val_loss < before.val_loss);

  export_hf_gpt2(run->model(), dir.file("exported"));
  const std::unique_ptr<GPT> exported = load_hf_gpt2(dir.file("exported"));
  CHECK(exported->config().block_size == 32);
  const Tensor ids = from_vector(std::vector<int64_t>{464, 3616, 286, 1204, 318, 11, 393, 407}, {1, 8});
  const Tensor targets = from_vector(std::vector<int64_t>{3616, 286, 1204, 318, 11, 393, 407, 284}, {1, 8});
  run->model().eval();
  CHECK(exported->loss(ids, targets).item<double>() == run->model().loss(ids, targets).item<double>());
}

TEST_CASE("train: a prepared dataset trains exactly as the same text encoded in memory") {
  ScratchDir dir;
  { std::ofstream(dir.file("corpus.txt")) << tg::testing::tiny_corpus(); }
  PrepareOptions options;
  options.sources = {dir.file("corpus.txt")};
  options.out_directory = dir.file("dataset");
  options.piece_bytes = 100;  // many pieces: the ids must not depend on them
  prepare_token_dataset(options);

  const TrainingData prepared = prepared_data(dir.file("dataset"));
  const TrainingData in_memory = char_level_data(tg::testing::tiny_corpus());
  CHECK(prepared.tokenizer.to_json() == in_memory.tokenizer.to_json());
  REQUIRE(prepared.splits.train.size() == in_memory.splits.train.size());
  REQUIRE(prepared.splits.val.size() == in_memory.splits.val.size());
  CHECK(prepared.splits.val.ids(0, prepared.splits.val.size()) == in_memory.splits.val.ids(0, in_memory.splits.val.size()));

  std::ostringstream progress;
  ScratchDir first, second;
  const TrainResult from_file = TrainingRun::start(prepared, tg::testing::tiny_config(), tg::testing::tiny_settings(6))
                                    ->train(tg::testing::outputs_in(first.path()), progress);
  const TrainResult from_memory = TrainingRun::start(in_memory, tg::testing::tiny_config(), tg::testing::tiny_settings(6))
                                      ->train(tg::testing::outputs_in(second.path()), progress);
  CHECK(from_file.step_losses == from_memory.step_losses);  // bitwise
  CHECK(from_file.best_val_loss == from_memory.best_val_loss);
}

TEST_CASE("train: a char-level chat corpus's special tokens travel through the checkpoint and the export") {
  std::string chat;
  for (int repeat = 0; repeat < 40; ++repeat)
    chat += "<|im_start|>user\nTo be?<|im_end|>\n<|im_start|>assistant\nOr not to be.<|im_end|>\n";
  const TrainingData data = char_level_data(chat, {"<|im_start|>", "<|im_end|>"});
  const std::optional<int64_t> im_end = data.tokenizer.token_id("<|im_end|>");
  REQUIRE(im_end.has_value());
  CHECK(*im_end == data.tokenizer.vocab_size() - 1);
  CHECK(data.tokenizer.as_char()->special_token_id("<|") == std::nullopt);
  CHECK_FALSE(data.tokenizer.as_char()->id_of(U'|').has_value());  // only inside the special tokens

  ScratchDir dir;
  std::ostringstream progress;
  auto run = TrainingRun::start(data, tg::testing::tiny_config(), tg::testing::tiny_settings(2));
  run->train(tg::testing::outputs_in(dir.path()), progress);
  const LoadedModel from_checkpoint = load_model(dir.file(kLatestCheckpointFile));
  CHECK(from_checkpoint.tokenizer.to_json() == data.tokenizer.to_json());

  export_hf_gpt2(run->model(), dir.file("exported"));
  write_char_vocabulary(dir.file("exported"), *data.tokenizer.as_char());
  CHECK(std::filesystem::exists(dir.file("exported") + "/char_special_tokens.json"));
  const LoadedModel exported = load_model(dir.file("exported"));
  CHECK(exported.tokenizer.to_json() == data.tokenizer.to_json());
  CHECK(exported.tokenizer.token_id("<|im_end|>") == im_end);

  // A malformed file is named; exporting a model without special tokens over it removes it.
  { std::ofstream(dir.file("exported") + "/char_special_tokens.json") << R"(["<|im_end|>", 3])"; }
  CHECK_THROWS_WITH_AS(load_model(dir.file("exported")),
                       doctest::Contains("char_special_tokens.json: the tokenizer's \"special_tokens\" must be an array "
                                         "of strings, but entry 1 is number"),
                       Error);
  write_char_vocabulary(dir.file("exported"), tokenizer::CharTokenizer::from_corpus(chat));
  CHECK_FALSE(std::filesystem::exists(dir.file("exported") + "/char_special_tokens.json"));
}
