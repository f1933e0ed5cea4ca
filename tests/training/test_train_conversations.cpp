// Chat SFT: the loss on the assistant's tokens only (its gradient is exactly zero
// at every other position), a run on conversations resumed to the same losses,
// and its evaluation over every assistant token of the val split.
#include <doctest/doctest.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/datasets/conversation_data.h"
#include "tinygpt/models/assistant_loss.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/functional/cross_entropy.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/train.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

// 40 one-turn sums of several lengths, as JSON Lines.
std::string sums_jsonl(int count = 40) {
  std::string text;
  for (int i = 0; i < count; ++i) {
    const int a = i % 7, b = (i * 3) % 5;
    text += "{\"messages\": [{\"role\": \"user\", \"content\": \"" + std::string(static_cast<size_t>(i % 4), ' ') +
            std::to_string(a) + "+" + std::to_string(b) + "?\"}, {\"role\": \"assistant\", \"content\": \"" +
            std::string(static_cast<size_t>(i % 3), '=') + std::to_string(a + b) + "\"}]}\n";
  }
  return text;
}

std::string write_file(const ScratchDir& dir, const std::string& name, const std::string& text) {
  std::ofstream(dir.file(name)) << text;
  return dir.file(name);
}

GPTConfig chat_config(double dropout = 0.0) {
  GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Learned, dropout);
  config.block_size = 64;  // a ChatML turn of a sum is about 55 characters
  config.batch_size = 4;
  return config;
}

}  // namespace

TEST_CASE("assistant-only loss: its gradient is exactly zero at every position that is not the assistant's") {
  ScratchDir dir;
  const TrainingData data = conversation_data({write_file(dir, "c.jsonl", sums_jsonl()), "", "train"}, nullptr);
  GPTConfig config = chat_config();
  config.vocab_size = data.tokenizer.vocab_size();
  GPT model(config, 3);
  const ConversationSplit& split = data.conversations->train;
  const Batch batch = split.batch(std::vector<int64_t>{0, 1, 2, 5}, config.block_size);
  const int64_t rows = batch.inputs.shape()[0], width = batch.inputs.shape()[1];

  // GPT::loss passes -100 through to the cross-entropy: the same number as from the logits directly.
  const Tensor logits = model.forward(batch.inputs).detach();  // (B, T, V)
  Tensor leaf = raw::contiguous(raw::reshape(logits, {rows * width, config.vocab_size}));
  leaf.set_requires_grad();
  const Tensor loss = nn::cross_entropy(leaf, raw::reshape(batch.targets, {-1}));
  CHECK(loss.item<double>() == doctest::Approx(model.loss(batch.inputs, batch.targets).item<double>()).epsilon(1e-6));
  backward(loss);
  const Tensor grad = leaf.grad();
  const int64_t* targets = batch.targets.data<int64_t>();
  int64_t assistant = 0;
  for (int64_t n = 0; n < rows * width; ++n) {
    double row_norm = 0;
    for (int64_t v = 0; v < config.vocab_size; ++v) row_norm += std::abs(grad.data<float>()[n * config.vocab_size + v]);
    CAPTURE(n);
    if (targets[n] == kIgnoredTarget) {
      CHECK(row_norm == 0.0);  // the user's text, the template's, the padding: exactly no gradient
    } else {
      CHECK(row_norm > 0.0);
      ++assistant;
    }
  }
  CHECK(assistant > 0);

}

TEST_CASE("assistant-only loss: the user's text changes no gradient except through the context") {
  // Two conversations alike but for a last user turn after the assistant's: not a target, and never
  // context of an assistant token (attention is causal), so the loss and every gradient are the same.
  ScratchDir dir;
  const std::string turns = "{\"role\": \"user\", \"content\": \"2+2?\"}, {\"role\": \"assistant\", \"content\": \"4\"}";
  const std::string text = "{\"messages\": [" + turns + ", {\"role\": \"user\", \"content\": \"abc\"}]}\n" +
                           "{\"messages\": [" + turns + ", {\"role\": \"user\", \"content\": \"xyz\"}]}\n" +
                           "{\"messages\": [" + turns + "]}\n";
  const TrainingData data = conversation_data({write_file(dir, "c.jsonl", text), "", "train"}, nullptr);
  GPTConfig config = chat_config();
  config.vocab_size = data.tokenizer.vocab_size();
  config.block_size = 128;  // the whole conversation, its last user turn included
  GPT model(config, 5);
  const ConversationSplit& split = data.conversations->train;
  const auto loss_and_gradients = [&](int64_t conversation) {
    model.zero_grad();
    const Batch batch = split.batch(std::vector<int64_t>{conversation}, config.block_size);
    Tensor loss = model.loss(batch.inputs, batch.targets);
    backward(loss);
    std::vector<std::vector<float>> gradients;
    for (const Tensor& parameter : model.parameters()) gradients.push_back(parameter.grad().to_vector<float>());
    return std::pair{loss.item<double>(), gradients};
  };
  const Batch first = split.batch(std::vector<int64_t>{0}, config.block_size);
  const Batch second = split.batch(std::vector<int64_t>{1}, config.block_size);
  CHECK(first.inputs.to_vector<int64_t>() != second.inputs.to_vector<int64_t>());
  CHECK(first.targets.to_vector<int64_t>() == second.targets.to_vector<int64_t>());  // the user's ids are no targets
  const auto [loss_abc, gradients_abc] = loss_and_gradients(0);
  const auto [loss_xyz, gradients_xyz] = loss_and_gradients(1);
  CHECK(loss_abc == loss_xyz);  // bitwise
  CHECK(gradients_abc == gradients_xyz);
}

TEST_CASE("train on conversations: a resumed run continues with exactly the same losses") {
  ScratchDir data_dir;
  const std::string path = write_file(data_dir, "sums.jsonl", sums_jsonl());
  const auto data = [&] { return conversation_data({path, "", "train"}, nullptr); };
  const GPTConfig config = chat_config(0.1);
  const TrainSettings settings = tg::testing::tiny_settings(16);  // 36 train conversations in batches of 4: 9 an epoch
  std::ostringstream progress;

  ScratchDir straight_dir;
  auto straight = TrainingRun::start(data(), config, settings);
  const TrainResult uninterrupted = straight->train(tg::testing::outputs_in(straight_dir.path()), progress);
  REQUIRE(uninterrupted.step_losses.size() == 16);
  for (const double loss : uninterrupted.step_losses) CHECK(std::isfinite(loss));
  CHECK(uninterrupted.step_losses.back() < uninterrupted.step_losses.front());

  for (const int64_t stop : {6, 11}) {  // inside the first epoch, inside the second
    CAPTURE(stop);
    ScratchDir dir;
    const TrainResult before = TrainingRun::start(data(), config, settings)->train(tg::testing::outputs_in(dir.path(), stop), progress);
    const Checkpoint checkpoint = load_checkpoint(dir.file(kLatestCheckpointFile));
    REQUIRE(checkpoint.header.data.has_value());
    CHECK(checkpoint.header.data->kind == "chat");
    const TrainResult after = TrainingRun::resume(checkpoint, data(), checkpoint.header.settings)
                                  ->train(tg::testing::outputs_in(dir.path()), progress);
    std::vector<double> losses = before.step_losses;
    losses.insert(losses.end(), after.step_losses.begin(), after.step_losses.end());
    CHECK(losses == uninterrupted.step_losses);  // bitwise
  }
}

TEST_CASE("train on conversations: the evaluation is the mean over every assistant token of the val split, the same each time") {
  ScratchDir data_dir;
  const TrainingData data = conversation_data({write_file(data_dir, "sums.jsonl", sums_jsonl()), "", "train"}, nullptr);
  CHECK(data.conversations->train.size() == 36);
  CHECK(data.conversations->val.size() == 4);  // the file's last 10%
  auto run = TrainingRun::start(data, chat_config(), tg::testing::tiny_settings(4));
  const Evaluation first = run->evaluate();
  const Evaluation second = run->evaluate();
  CHECK(first.val_loss == second.val_loss);
  CHECK(first.train_loss == second.train_loss);
  const ConversationSplit& val = run->data().conversations->val;
  const AssistantLoss whole = evaluate_conversations(run->model(), val, val.usable(64), 3, 64);
  CHECK(whole.tokens == val.fit(64).assistant_targets);
  CHECK(first.val_loss == doctest::Approx(whole.mean()).epsilon(1e-6));  // other batches: float rounding apart
}

TEST_CASE("train on conversations: drawn as the slices of 2 ranks, a micro-batch stacks them, padded to the longest") {
  ScratchDir data_dir;
  TrainingData data = conversation_data({write_file(data_dir, "sums.jsonl", sums_jsonl()), "", "train"}, nullptr);
  auto run = TrainingRun::start(data, chat_config(), tg::testing::tiny_settings(3));
  run->draw_batches_as_ranks(2);
  std::ostringstream progress;
  ScratchDir dir;
  const TrainResult result = run->train(tg::testing::outputs_in(dir.path()), progress);
  REQUIRE(result.step_losses.size() == 3);
  for (const double loss : result.step_losses) CHECK(std::isfinite(loss));

  // stack_rows: rows of 2 and 3 examples become a (2, 3) batch, the short row padded with -100 targets.
  const ConversationSplit& split = run->data().conversations->train;
  const Batch stacked = stack_rows({split.batch(std::vector<int64_t>{0}, 2), split.batch(std::vector<int64_t>{1}, 3)});
  CHECK(stacked.inputs.shape() == Shape{2, 3});
  CHECK(stacked.targets.data<int64_t>()[2] == kIgnoredTarget);
  CHECK(stacked.inputs.data<int64_t>()[2] == 0);
}
