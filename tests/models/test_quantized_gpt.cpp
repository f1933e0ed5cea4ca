// A GPT with bfloat16 or int8 weights (GPT::quantize, nn/quantize.h): the loss
// of the GPT-2 fixture within 0.1% (bfloat16) and 1% (int8) of float32's, on
// the prompt's forward and token by token through the KV cache; the fused
// decode step equal to the module-by-module step bit for bit; generation with
// the cache giving the tokens it gives without; quantized checkpoints that come
// back exactly, and that fail to load, clearly, when they are damaged.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/training/checkpoint.h"
#include "tinygpt/models/generate.h"
#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/training/train.h"
#include "tinygpt/nn/quantize.h"
#include "tinygpt/tensor/elementwise.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/test_train_helpers.h"
#include "tests/models/tiny_gpt_config.h"

using namespace tg;
using tg::testing::ScratchDir;

namespace {

const std::filesystem::path kFixture = "tests/fixtures/hf_gpt2";

std::vector<int64_t> fixture_prompt() {
  std::ifstream file(kFixture / "expected.json");
  return nlohmann::json::parse(file)["prompt_ids"].get<std::vector<int64_t>>();
}

Tensor row_of(const std::vector<int64_t>& ids) { return from_vector<int64_t>(ids, {1, static_cast<int64_t>(ids.size())}); }

// Mean cross-entropy of predicting ids[t + 1] from ids[0 .. t], in one forward.
double forward_loss(GPT& model, const std::vector<int64_t>& ids) {
  NoGradGuard no_grad;
  const std::vector<int64_t> inputs(ids.begin(), ids.end() - 1), targets(ids.begin() + 1, ids.end());
  return model.loss(row_of(inputs), row_of(targets)).item<double>();
}

// The same loss with the logits of each position from its own decode step
// through the KV cache (the path generation takes: int8 activations rounded).
double decode_loss(GPT& model, const std::vector<int64_t>& ids) {
  NoGradGuard no_grad;
  std::vector<nn::KVCache> caches = model.make_caches(1, model.config().block_size);
  double total = 0;
  for (size_t t = 0; t + 1 < ids.size(); ++t) {
    const std::vector<float> logits = model.forward_cached(row_of({ids[t]}), caches).to_vector<float>();
    double largest = -INFINITY, sum = 0;
    for (float logit : logits) largest = std::max(largest, double(logit));
    for (float logit : logits) sum += std::exp(logit - largest);
    total += largest + std::log(sum) - logits[ids[t + 1]];
  }
  return total / static_cast<double>(ids.size() - 1);
}

std::unique_ptr<GPT> fixture_model(DType format) {
  std::unique_ptr<GPT> model = load_hf_gpt2(kFixture.string());
  model->eval();
  if (format != DType::Float32) model->quantize(format);
  return model;
}

// Small enough to run in milliseconds; weights spread wider than init's so that every layer matters.
std::unique_ptr<GPT> small_model(PositionalEncoding positional, DType format) {
  GPTConfig config = testing::tiny_gpt_config(
      {.vocab_size = 50, .n_embd = 48, .n_head = 4, .block_size = 24, .positional = positional, .preset = "q-test"});
  auto model = std::make_unique<GPT>(config, 3);
  for (const Tensor& parameter : model->parameters())
    if (parameter.dim() == 2) raw::mul_(parameter, 5.0);
  model->eval();
  model->quantize(format);
  return model;
}

}  // namespace

TEST_CASE("quantized GPT-2 fixture: the loss within 0.1% (bfloat16) and 1% (int8) of float32's") {
  const std::vector<int64_t> ids = fixture_prompt();
  auto float_model = fixture_model(DType::Float32);
  const double reference = forward_loss(*float_model, ids);
  CHECK(decode_loss(*float_model, ids) == doctest::Approx(reference).epsilon(1e-5));
  for (DType format : {DType::BFloat16, DType::Int8}) {
    const std::string format_name = dtype_name(format);
    CAPTURE(format_name);
    auto model = fixture_model(format);
    CHECK(model->weight_format() == format);
    const double bound = format == DType::BFloat16 ? 1e-3 : 1e-2;
    const double forward = forward_loss(*model, ids), decoded = decode_loss(*model, ids);
    MESSAGE(format_name << ": loss " << forward << " (forward), " << decoded << " (decode steps); float32 "
                               << reference);
    CHECK(std::abs(forward - reference) <= bound * reference);
    CHECK(std::abs(decoded - reference) <= bound * reference);
    CHECK(forward != reference);  // the weights did change
  }
}

TEST_CASE("quantized GPT: the fused decode step equals the module-by-module step bit for bit") {
  for (DType format : {DType::BFloat16, DType::Int8}) {
    for (PositionalEncoding positional : {PositionalEncoding::Learned, PositionalEncoding::Rope}) {
      const std::string format_name = dtype_name(format);
    CAPTURE(format_name);
      auto model = small_model(positional, format);
      Generator generator(7);
      const Tensor ids = randint({1, 10}, 0, 50, generator);
      std::vector<nn::KVCache> fused_caches = model->make_caches(1, 24), module_caches = model->make_caches(1, 24);
      model->forward_cached(raw::narrow(ids, 1, 0, 4), fused_caches);
      model->forward_cached(raw::narrow(ids, 1, 0, 4), module_caches);
      for (int64_t step = 4; step < 10; ++step) {
        const Tensor token = raw::contiguous(raw::narrow(ids, 1, step, 1));
        const Tensor fused = model->decode_step(token, fused_caches);
        model->set_fused_decode(false);
        const Tensor modules = model->forward_cached(token, module_caches);
        model->set_fused_decode(true);
        CHECK(fused.to_vector<float>() == modules.to_vector<float>());
      }
    }
  }
}

TEST_CASE("quantized GPT: generation with the KV cache gives the tokens it gives without") {
  for (DType format : {DType::BFloat16, DType::Int8}) {
    const std::string format_name = dtype_name(format);
    CAPTURE(format_name);
    auto model = fixture_model(format);
    GenerationOptions options;
    options.max_new_tokens = 20;
    options.sampling.greedy = true;
    options.use_cache = true;
    const std::vector<int64_t> cached = generate(*model, fixture_prompt(), options);
    options.use_cache = false;
    CHECK(generate(*model, fixture_prompt(), options) == cached);
    CHECK(cached.size() == 20);
  }
}

TEST_CASE("quantized checkpoint: saved and loaded, the same weights and logits; the format in the header") {
  ScratchDir dir;
  const std::vector<int64_t> ids = fixture_prompt();
  for (DType format : {DType::BFloat16, DType::Int8}) {
    auto model = fixture_model(format);
    CheckpointHeader header;
    header.config = model->config();
    header.tokenizer = {{"type", "char"}, {"characters", "ab"}};
    const std::string path = dir.file(std::string(dtype_name(format)) + ".safetensors");
    save_checkpoint(path, header, *model);
    const Checkpoint checkpoint = load_checkpoint(path);
    CHECK(checkpoint.header.weights == format);
    CHECK_FALSE(checkpoint.has_optimizer_state);
    GPT loaded(checkpoint.header.config, 0, DType::Float32, /*initialize=*/false);
    restore_parameters(checkpoint, loaded);  // quantizes the float32 model first
    CHECK(loaded.weight_format() == format);
    NoGradGuard no_grad;
    CHECK(loaded.forward(row_of(ids)).to_vector<float>() == model->forward(row_of(ids)).to_vector<float>());
    CHECK(std::filesystem::file_size(path) < (format == DType::Int8 ? 0.4 : 0.6) *
                                                 std::filesystem::file_size(kFixture / "model.safetensors"));
  }
}

TEST_CASE("quantized checkpoint: a wrong block count, scale or dtype is a clear error") {
  ScratchDir dir;
  auto model = fixture_model(DType::Int8);
  CheckpointHeader header;
  header.config = model->config();
  header.tokenizer = {{"type", "char"}, {"characters", "ab"}};
  const std::string good = dir.file("good.safetensors"), broken = dir.file("broken.safetensors");
  save_checkpoint(good, header, *model);
  const auto load_edited = [&](auto edit) {
    SafetensorsFile file = load_safetensors(good);
    edit(file.tensors, file.metadata);
    save_safetensors(broken, file.tensors, file.metadata);
    GPT loaded(header.config, 0, DType::Float32, /*initialize=*/false);
    restore_parameters(load_checkpoint(broken), loaded);
  };
  const auto tensor_named = [](std::vector<NamedTensor>& tensors, const std::string& name) -> NamedTensor& {
    return *std::find_if(tensors.begin(), tensors.end(), [&](const NamedTensor& tensor) { return tensor.name == name; });
  };
  CHECK_THROWS_WITH_AS(load_edited([&](std::vector<NamedTensor>& tensors, Metadata&) {
                         tensor_named(tensors, "blocks.0.mlp.c_fc.weight_scale").tensor = zeros({64, 2});
                       }),
                       doctest::Contains("tensor 'blocks.0.mlp.c_fc.weight_scale' is float32 (64, 2), expected float32 (64, 1)"),
                       Error);
  CHECK_THROWS_WITH_AS(load_edited([&](std::vector<NamedTensor>& tensors, Metadata&) {
                         Tensor scales = raw::clone(tensor_named(tensors, "blocks.1.attn.qkv.weight_scale").tensor);
                         scales.data<float>()[5] = std::nanf("");
                         tensor_named(tensors, "blocks.1.attn.qkv.weight_scale").tensor = scales;
                       }),
                       doctest::Contains("blocks.1.attn.qkv.weight: scale 5 (row 5, block 0) is nan"), Error);
  CHECK_THROWS_WITH_AS(load_edited([&](std::vector<NamedTensor>& tensors, Metadata&) {
                         NamedTensor& weight = tensor_named(tensors, "wte.weight");
                         weight.tensor = zeros(weight.tensor.shape(), DType::BFloat16);
                       }),
                       doctest::Contains("tensor 'wte.weight' is bfloat16 (50257, 16), expected int8 (50257, 16)"), Error);
  CHECK_THROWS_WITH_AS(load_edited([&](std::vector<NamedTensor>&, Metadata& metadata) { metadata["weights"] = "int4"; }),
                       doctest::Contains("'weights' is 'int4'; expected float32, bfloat16 or int8"), Error);
  // Said to be float32, the file is too small for its config: the check before any model is built.
  CHECK_THROWS_WITH_AS(load_edited([&](std::vector<NamedTensor>&, Metadata& metadata) { metadata["weights"] = "float32"; }),
                       doctest::Contains("more than the 1016916 bytes of tensors in the file can hold"), Error);
  CHECK_THROWS_WITH_AS(load_edited([&](std::vector<NamedTensor>& tensors, Metadata&) {
                         std::erase_if(tensors, [](const NamedTensor& tensor) { return tensor.name == "lm_head.weight_scale" || tensor.name == "wte.weight_scale"; });
                       }),
                       doctest::Contains("tensor 'wte.weight_scale' (50257, 1) is missing"), Error);
}

TEST_CASE("quantized GPT: a float32 model only, once; training refuses its checkpoint") {
  auto model = small_model(PositionalEncoding::Learned, DType::Int8);
  CHECK_THROWS_WITH_AS(model->quantize(DType::BFloat16), doctest::Contains("the weights are int8; only a float32 model"),
                       Error);
  GPT float64_model(model->config(), 1, DType::Float64);
  CHECK_THROWS_WITH_AS(float64_model.quantize(DType::Int8), doctest::Contains("the weights are float64"), Error);
  CHECK(model->describe().find("weights int8") != std::string::npos);
}
