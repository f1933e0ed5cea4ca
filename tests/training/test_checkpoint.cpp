// Checkpoints: what is saved comes back, and every kind of wrong file is a clear error.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/optim/optimizer.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/train.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/test_train_helpers.h"
#include "tinygpt/tokenizer/char_tokenizer.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

// A checkpoint written by a real (short) run, with optimiser state.
struct TrainedCheckpoint {
  ScratchDir dir;
  std::unique_ptr<TrainingRun> run;
  TrainedCheckpoint() {
    run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), tg::testing::tiny_settings(4));
    std::ostringstream progress;
    run->train(tg::testing::outputs_in(dir.path()), progress);
  }
  std::string latest() const { return dir.file(kLatestCheckpointFile); }
};

// Rewrites `source` into `target` with its tensors and metadata changed by `edit`.
template <class Edit>
void rewrite(const std::string& source, const std::string& target, Edit edit) {
  SafetensorsFile file = load_safetensors(source);
  edit(file.tensors, file.metadata);
  save_safetensors(target, file.tensors, file.metadata);
}

}  // namespace

TEST_CASE("checkpoint: weights, optimiser state and run state round-trip exactly") {
  TrainedCheckpoint trained;
  const Checkpoint checkpoint = load_checkpoint(trained.latest());
  const CheckpointHeader& saved = trained.run->state();
  CHECK(checkpoint.header.step == 4);
  CHECK(checkpoint.has_optimizer_state);
  CHECK(checkpoint.optimizer_step == 4);
  CHECK(checkpoint.header.config.to_json() == saved.config.to_json());
  CHECK(checkpoint.header.settings.to_json() == saved.settings.to_json());
  CHECK(checkpoint.header.tokenizer == saved.tokenizer);
  CHECK(checkpoint.header.best_val_loss == saved.best_val_loss);  // bitwise: written in shortest exact form
  CHECK(checkpoint.header.data_generator.counter == saved.data_generator.counter);
  CHECK(checkpoint.header.data_generator.counter == 4 * 3);  // 4 batches of 3 windows

  GPT model(checkpoint.header.config, 99, DType::Float32, /*initialize=*/false);
  restore_parameters(checkpoint, model);
  const auto restored = model.named_parameters(), original = trained.run->model().named_parameters();
  REQUIRE(restored.size() == original.size());
  for (size_t i = 0; i < restored.size(); ++i) {
    CAPTURE(restored[i].first);
    CHECK(restored[i].second.to_vector<float>() == original[i].second.to_vector<float>());
  }

  // The moments are saved per parameter, under optimizer.m.<name> / optimizer.v.<name>.
  const Tensor m_wte = checkpoint.file.at("optimizer.m.wte.weight");
  CHECK(m_wte.shape() == model.named_parameters()[0].second.shape());
  nn::ParameterArena arena(model);
  nn::Optimizer optimizer(arena, nn::AdamWOptions{});
  restore_optimizer(checkpoint, optimizer);
  CHECK(optimizer.step_count() == 4);
  CHECK(raw::narrow(optimizer.adamw().state().m, 0, 0, m_wte.numel()).to_vector<float>() ==
        raw::reshape(m_wte, {-1}).to_vector<float>());
}

TEST_CASE("checkpoint: best.safetensors has the weights only, and sampling prefers it") {
  TrainedCheckpoint trained;
  const Checkpoint best = load_checkpoint(trained.dir.file(kBestCheckpointFile));
  CHECK_FALSE(best.has_optimizer_state);
  CHECK(best.file.find("optimizer.m.wte.weight") == nullptr);
  GPT model(best.header.config, 0, DType::Float32, false);
  nn::ParameterArena arena(model);
  nn::Optimizer optimizer(arena, nn::AdamWOptions{});
  CHECK_THROWS_WITH_AS(restore_optimizer(best, optimizer), doctest::Contains("holds weights only"), tg::Error);

  CHECK(find_checkpoint_for_sampling(trained.dir.path()) == trained.dir.file(kBestCheckpointFile));
  std::filesystem::remove(trained.dir.file(kBestCheckpointFile));
  CHECK(find_checkpoint_for_sampling(trained.dir.path()) == trained.latest());
  CHECK(find_checkpoint_for_sampling(trained.latest()) == trained.latest());
  std::filesystem::remove(trained.latest());
  CHECK_THROWS_WITH_AS(find_checkpoint_for_sampling(trained.dir.path()),
                       doctest::Contains("has neither best.safetensors nor model.safetensors"), tg::Error);
  CHECK_THROWS_WITH_AS(find_checkpoint_for_sampling(trained.dir.file("nowhere")), doctest::Contains("does not exist"),
                       tg::Error);
}

TEST_CASE("checkpoint: a foreign safetensors file is refused") {
  ScratchDir dir;
  save_safetensors(dir.file("foreign.safetensors"), {{"weight", zeros({2, 2})}}, {{"producer", "someone else"}});
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.file("foreign.safetensors")),
                       doctest::Contains("is a safetensors file but not a tinygpt checkpoint"), tg::Error);
  save_safetensors(dir.file("future.safetensors"), {{"weight", zeros({2, 2})}}, {{"format", "tinygpt-checkpoint-v9"}});
  CHECK_THROWS_WITH_AS(load_checkpoint(dir.file("future.safetensors")),
                       doctest::Contains("has format 'tinygpt-checkpoint-v9'"), tg::Error);
}

TEST_CASE("checkpoint: missing, unexpected and misshapen tensors name the tensor") {
  TrainedCheckpoint trained;
  const std::string broken = trained.dir.file("broken.safetensors");
  const GPTConfig config = trained.run->state().config;
  GPT model(config, 0, DType::Float32, false);

  rewrite(trained.latest(), broken, [](std::vector<NamedTensor>& tensors, Metadata&) {
    std::erase_if(tensors, [](const NamedTensor& tensor) { return tensor.name == "blocks.1.attn.qkv.bias"; });
  });
  CHECK_THROWS_WITH_AS(restore_parameters(load_checkpoint(broken), model),
                       doctest::Contains("tensor 'blocks.1.attn.qkv.bias' (48,) is missing"), tg::Error);

  rewrite(trained.latest(), broken, [](std::vector<NamedTensor>& tensors, Metadata&) {
    tensors.push_back({"blocks.7.mystery", zeros({3})});
  });
  CHECK_THROWS_WITH_AS(restore_parameters(load_checkpoint(broken), model),
                       doctest::Contains("unexpected tensor 'blocks.7.mystery'"), tg::Error);

  rewrite(trained.latest(), broken, [](std::vector<NamedTensor>& tensors, Metadata&) {
    for (NamedTensor& tensor : tensors)
      if (tensor.name == "ln_f.weight") tensor.tensor = zeros({17});
  });
  CHECK_THROWS_WITH_AS(restore_parameters(load_checkpoint(broken), model),
                       doctest::Contains("tensor 'ln_f.weight' is float32 (17,), expected float32 (16,)"), tg::Error);

  rewrite(trained.latest(), broken, [](std::vector<NamedTensor>& tensors, Metadata&) {
    std::erase_if(tensors, [](const NamedTensor& tensor) { return tensor.name == "optimizer.v.wte.weight"; });
  });
  const Checkpoint without_moment = load_checkpoint(broken);
  nn::ParameterArena arena(model);
  nn::Optimizer optimizer(arena, nn::AdamWOptions{});
  CHECK_THROWS_WITH_AS(restore_optimizer(without_moment, optimizer),
                       doctest::Contains("tensor 'optimizer.v.wte.weight'"), tg::Error);
}

TEST_CASE("checkpoint: bad metadata is named") {
  TrainedCheckpoint trained;
  const std::string broken = trained.dir.file("broken.safetensors");

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    auto config = nlohmann::json::parse(metadata["config"]);
    config["n_head"] = 3;  // 16 channels do not split into 3 heads
    metadata["config"] = config.dump();
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("bad 'config'"), tg::Error);

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) { metadata["config"] = "{not json"; });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("'config' metadata is not valid JSON"), tg::Error);

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    metadata["config"] = std::string(70000, '[') + std::string(70000, ']');  // would overflow the stack if printed
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("nests deeper than 64 levels"), tg::Error);

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    auto config = nlohmann::json::parse(metadata["config"]);
    config["n_layer"] = 1000000000;  // a few KB of tensors cannot be a billion layers: refused before allocating
    metadata["config"] = config.dump();
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("parameters, more than the"), tg::Error);

  // Integers must be integers of their type: 4e19 is a double past uint64 (converting it was undefined
  // behaviour: tests/fuzz/corpus/checkpoint/generator_seed_4e19), and nlohmann read 1.5 as 1 and -1 as 2^64 - 1.
  for (const std::string state : {R"({"seed": 4e19, "counter": 0})", R"({"seed": 1.5, "counter": 0})",
                                  R"({"seed": -1, "counter": 0})", R"({"seed": 1})"}) {
    CAPTURE(state);
    rewrite(trained.latest(), broken, [&](auto&, Metadata& metadata) { metadata["data_generator"] = state; });
    CHECK_THROWS_WITH_AS(load_checkpoint(broken),
                         doctest::Contains("'data_generator' must be {\"seed\": S, \"counter\": C}"), tg::Error);
  }
  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    metadata["other_ranks"] = R"([{"data": {"seed": 1, "counter": 2}, "dropout": {"seed": 3, "counter": 1e300}}])";
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("each generator in 'other_ranks' must be"),
                       tg::Error);
  const std::pair<const char*, const char*> bad_settings[] = {
      {R"({"iters": 2.5})", "'iters' must be an integer that fits int64, got 2.5"},
      {R"({"seed": 1e30})", "'seed' must be an integer that fits uint64, got 1e+30"}};
  for (const auto& [setting, message] : bad_settings) {
    const std::string edit = setting;
    rewrite(trained.latest(), broken, [&edit](auto&, Metadata& metadata) {
      auto training = nlohmann::json::parse(metadata["training"]);
      training.update(nlohmann::json::parse(edit));
      metadata["training"] = training.dump();
    });
    CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains(message), tg::Error);
  }

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) { metadata.erase("step"); });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("the metadata has no 'step' entry"), tg::Error);

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    std::string characters;
    for (char c = '!'; c <= '~'; ++c) characters += c;  // 94 characters for a model of fewer
    metadata["tokenizer"] = nlohmann::json{{"type", "char"}, {"characters", characters}}.dump();
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("the char tokenizer has 94 tokens but the config's vocab_size is only"),
                       tg::Error);

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    metadata["tokenizer"] = nlohmann::json{{"type", "sentencepiece"}}.dump();
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("unknown tokenizer type 'sentencepiece'"), tg::Error);

  rewrite(trained.latest(), broken, [](auto&, Metadata& metadata) {
    metadata["tokenizer"] = nlohmann::json{{"type", "bpe"}, {"encoder.json", "{\"a\": 0}"}}.dump();
  });
  CHECK_THROWS_WITH_AS(load_checkpoint(broken), doctest::Contains("no text field 'vocab.bpe'"), tg::Error);
}

TEST_CASE("checkpoint: a truncated file is refused by the reader") {
  TrainedCheckpoint trained;
  const std::string truncated = trained.dir.file("truncated.safetensors");
  {
    std::ifstream in(trained.latest(), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream out(truncated, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size() / 2));
  }
  CHECK_THROWS_AS(load_checkpoint(truncated), tg::Error);
}

TEST_CASE("checkpoint: the products' dtype (train --dtype, bf16_matmul) is saved; older checkpoints mean float32") {
  ScratchDir dir;
  TrainSettings settings = tg::testing::tiny_settings(2);
  settings.bf16_matmul = 1;
  auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), tg::testing::tiny_config(), settings);
  std::ostringstream progress;
  run->train(tg::testing::outputs_in(dir.path()), progress);
  const Checkpoint checkpoint = load_checkpoint(dir.file(kLatestCheckpointFile));
  CHECK(checkpoint.header.settings.bf16_matmul == 1);  // train --resume runs in bfloat16 again without --dtype

  nlohmann::json older = checkpoint.header.settings.to_json();
  older.erase("bf16_matmul");  // written before mixed precision existed
  CHECK(TrainSettings::from_json(older).bf16_matmul == 0);
}
