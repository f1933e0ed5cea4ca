// The Llama-style block through every path GPT-2's block takes: training resumed
// bit for bit, the same steps on any thread count, activation checkpointing,
// mixed precision, checkpoints, and quantized decoding. (Exactness against
// PyTorch: test_torch_modern_parity.cpp.)
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <sstream>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/datasets/data.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/nn/parameter_arena.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/runtime/threads.h"
#include "tinygpt/tensor/view.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/training/train.h"
#include "tests/models/test_train_helpers.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

// Two tiny Llama-style blocks: every switch away from GPT-2's, in two combinations.
GPTConfig llama_like(double dropout = 0.1) {
  GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Rope, dropout);
  config.n_embd = 16;
  config.n_head = 4;
  config.n_kv_head = 2;
  config.norm = nn::NormKind::RMSNorm;
  config.mlp = nn::MlpKind::SwiGLU;
  config.mlp_hidden = 24;
  config.qk_norm = true;
  config.bias = nn::BiasMode::Qkv;
  config.tie_embeddings = false;
  config.rope_pairing = nn::RopePairing::Half;
  config.rope_scaling = nn::RopeScaling::parse("llama3:4,1,4,4");
  return config;
}

GPTConfig nanochat_like(double dropout = 0.1) {
  GPTConfig config = tg::testing::tiny_config(PositionalEncoding::Rope, dropout);
  config.n_embd = 16;
  config.n_head = 2;
  config.n_kv_head = 1;
  config.head_dim = 6;
  config.norm = nn::NormKind::RMSNorm;
  config.norm_weight = false;
  config.mlp = nn::MlpKind::ReLU2;
  config.qk_norm = true;
  config.bias = nn::BiasMode::None;
  config.tie_embeddings = false;
  config.rope_base = 500.0;
  return config;
}

struct Family {
  const char* name;
  GPTConfig (*config)(double dropout);
};
const Family kFamilies[] = {{"llama-like", &llama_like}, {"nanochat-like", &nanochat_like}};

std::vector<std::vector<float>> weights_of(GPT& model) {
  std::vector<std::vector<float>> weights;
  for (const auto& [name, parameter] : model.named_parameters()) weights.push_back(parameter.to_vector<float>());
  return weights;
}

}  // namespace

TEST_CASE("Llama-style block: an interrupted run resumes with exactly the same losses and weights") {
  for (const Family& family : kFamilies) {
    CAPTURE(family.name);
    const GPTConfig config = family.config(0.1);
    const TrainSettings settings = tg::testing::tiny_settings(10);
    std::ostringstream progress;
    ScratchDir straight_dir;
    auto straight = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings);
    const TrainResult uninterrupted = straight->train(tg::testing::outputs_in(straight_dir.path()), progress);

    ScratchDir dir;
    const TrainResult before = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, settings)
                                   ->train(tg::testing::outputs_in(dir.path(), 6), progress);
    const Checkpoint checkpoint = load_checkpoint(dir.file("model.safetensors"));
    CHECK(checkpoint.header.config.to_json() == straight->model().config().to_json());  // every switch saved
    auto resumed = TrainingRun::resume(checkpoint, char_level_data(tg::testing::tiny_corpus()), checkpoint.header.settings);
    const TrainResult after = resumed->train(tg::testing::outputs_in(dir.path()), progress);
    std::vector<double> losses = before.step_losses;
    losses.insert(losses.end(), after.step_losses.begin(), after.step_losses.end());
    CHECK(losses == uninterrupted.step_losses);  // bitwise
    CHECK(weights_of(resumed->model()) == weights_of(straight->model()));
    CHECK(uninterrupted.step_losses.back() < uninterrupted.step_losses.front());  // it learns
  }
}

TEST_CASE("Llama-style block: the same losses and weights on 1, 2 and 3 threads") {
  GPTConfig config = llama_like(0.0);
  config.n_embd = 64;  // wide enough that the norms, SwiGLU and the products run their parallel paths
  config.mlp_hidden = 0;
  config.block_size = 64;
  config.batch_size = 8;
  const int threads_before = thread_ceiling();
  std::vector<TrainResult> results;
  std::vector<std::vector<std::vector<float>>> weights;
  set_num_threads(3);
  for (int threads : {1, 2, 3}) {
    use_threads(threads);
    ScratchDir dir;
    std::ostringstream progress;
    auto run = TrainingRun::start(char_level_data(tg::testing::tiny_corpus()), config, tg::testing::tiny_settings(3));
    results.push_back(run->train(tg::testing::outputs_in(dir.path()), progress));
    weights.push_back(weights_of(run->model()));
  }
  set_num_threads(threads_before);
  for (size_t index = 1; index < results.size(); ++index) {
    CAPTURE(index + 1);
    CHECK(results[index].step_losses == results[0].step_losses);
    CHECK(weights[index] == weights[0]);
  }
}

TEST_CASE("Llama-style block: activation checkpointing gives the plain path's loss and gradients exactly") {
  for (const Family& family : kFamilies) {
    CAPTURE(family.name);
    GPTConfig config = family.config(0.2);
    config.vocab_size = 11;
    std::map<std::string, std::vector<float>> gradients[2];
    double losses[2];
    for (int checkpointing = 0; checkpointing < 2; ++checkpointing) {
      GPT model(config, 5);
      nn::ParameterArena arena(model);
      model.set_activation_checkpointing(checkpointing == 1);
      Generator generator(9);
      const Tensor ids = randint({2, 8}, 0, 11, generator), targets = randint({2, 8}, 0, 11, generator);
      const Tensor loss = model.loss(ids, targets);
      losses[checkpointing] = loss.item<double>();
      backward(loss);
      for (const auto& [name, parameter] : arena.named_parameters()) gradients[checkpointing][name] = parameter.grad().to_vector<float>();
    }
    CHECK(losses[1] == losses[0]);
    CHECK(gradients[1] == gradients[0]);
  }
}

TEST_CASE("Llama-style block: bfloat16 products keep the loss and gradients within bfloat16's rounding") {
  for (const Family& family : kFamilies) {
    CAPTURE(family.name);
    GPTConfig config = family.config(0.0);
    config.vocab_size = 11;
    double losses[2];
    std::vector<std::vector<float>> gradients[2];
    for (int mixed = 0; mixed < 2; ++mixed) {
      GPT model(config, 5);
      model.set_matmul_dtype(mixed ? DType::BFloat16 : DType::Float32);
      Generator generator(3);
      const Tensor loss = model.loss(randint({2, 8}, 0, 11, generator), randint({2, 8}, 0, 11, generator));
      losses[mixed] = loss.item<double>();
      backward(loss);
      for (const Tensor& parameter : model.parameters()) gradients[mixed].push_back(parameter.grad().to_vector<float>());
    }
    CHECK(losses[1] != losses[0]);
    CHECK(losses[1] == doctest::Approx(losses[0]).epsilon(2e-3));
    for (size_t index = 0; index < gradients[0].size(); ++index) {
      double difference = 0, size = 0;
      for (size_t i = 0; i < gradients[0][index].size(); ++i) {
        difference += std::pow(gradients[1][index][i] - gradients[0][index][i], 2);
        size += std::pow(gradients[0][index][i], 2);
      }
      CAPTURE(index);
      CHECK(std::sqrt(difference / std::max(size, 1e-30)) < 0.05);
    }
  }
}

TEST_CASE("Llama-style block: quantized to bfloat16 and int8, the fused decode step equals the module path") {
  for (const Family& family : kFamilies) {
    for (const DType format : {DType::BFloat16, DType::Int8}) {
      CAPTURE(family.name);
      CAPTURE(dtype_name(format));
      GPTConfig config = family.config(0.0);
      config.vocab_size = 11;
      config.n_embd = 64;  // int8 blocks of 32 along each row
      config.mlp_hidden = 64;
      if (config.head_dim > 0) config.head_dim = 32;
      GPT model(config, 8);
      model.eval();
      NoGradGuard no_grad;
      const Tensor ids = from_vector<int64_t>({1, 4, 2, 9, 3, 3}, {1, 6});
      const std::vector<float> full = model.forward(ids).to_vector<float>();
      model.quantize(format);
      std::vector<nn::KVCache> fused = model.make_caches(1, 6), modules = model.make_caches(1, 6);
      double worst = 0;
      for (int64_t t = 0; t < 6; ++t) {
        const Tensor token = raw::contiguous(raw::narrow(ids, 1, t, 1));
        const std::vector<float> a = model.decode_step(token, fused).to_vector<float>();
        model.set_fused_decode(false);
        const std::vector<float> b = model.forward_cached(token, modules).to_vector<float>();
        model.set_fused_decode(true);
        CHECK(a == b);
        for (size_t v = 0; v < a.size(); ++v) worst = std::max(worst, static_cast<double>(std::abs(a[v] - full[t * 11 + v])));
      }
      CHECK(worst < (format == DType::Int8 ? 0.05 : 0.02));  // near the float32 model's logits
    }
  }
}
