// The Llama-style block against PyTorch: logits, loss and every parameter's
// gradient of a 2-layer model for each published family's switches (Llama 3,
// Qwen3, Qwen2, nanochat). The fixtures are written by
// tests/reference/make_modern_gpt_fixtures.py (the block written from scratch in
// PyTorch with Hugging Face's LlamaForCausalLM semantics) and committed, so this
// test needs no Python. Each model also decodes with its KV cache, fused and
// module by module, to the same logits as the full forward.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/gpt.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/view.h"

#include "torch_model_match.h"

using namespace tg;
using tg::testing::check_matches;

namespace {

const std::string kFamilies[] = {"llama3", "qwen3", "qwen2", "nanochat"};

// The fixture's model with its weights: the config read by GPTConfig::from_json.
struct FixtureModel {
  SafetensorsFile fixture;
  std::unique_ptr<GPT> model;
};

FixtureModel load_fixture(const std::string& family) {
  FixtureModel loaded{load_safetensors("tests/fixtures/modern/" + family + ".safetensors"), nullptr};
  const GPTConfig config = GPTConfig::from_json(nlohmann::json::parse(loaded.fixture.metadata.at("config")));
  loaded.model = std::make_unique<GPT>(config, 0, DType::Float32, /*initialize=*/false);
  std::set<std::string> fixture_names, model_names;
  for (const NamedTensor& tensor : loaded.fixture.tensors)
    if (tensor.name.starts_with("param.")) fixture_names.insert(tensor.name.substr(6));
  for (const auto& [name, parameter] : loaded.model->named_parameters()) {
    model_names.insert(name);
    if (fixture_names.contains(name)) raw::copy_(parameter, loaded.fixture.at("param." + name));
  }
  CHECK(model_names == fixture_names);  // the fixture names exactly our parameters
  CHECK(loaded.model->parameter_count() == config.parameter_count());
  return loaded;
}

}  // namespace

TEST_CASE("Llama-style GPT matches PyTorch: logits, loss and every gradient (Llama 3, Qwen3, Qwen2, nanochat)") {
  for (const std::string& family : kFamilies) {
    CAPTURE(family);
    FixtureModel loaded = load_fixture(family);
    GPT& model = *loaded.model;
    const Tensor inputs = loaded.fixture.at("inputs"), targets = loaded.fixture.at("targets");
    check_matches(model.forward(inputs), loaded.fixture.at("logits"), "logits");
    const Tensor loss = model.loss(inputs, targets);
    check_matches(loss, loaded.fixture.at("loss"), "loss");
    backward(loss);
    for (const auto& [name, parameter] : model.named_parameters())
      check_matches(parameter.grad(), loaded.fixture.at("grad." + name), "grad." + name);
  }
}

TEST_CASE("Llama-style GPT: decoding with the KV cache, fused or module by module, gives the full forward's logits") {
  for (const std::string& family : kFamilies) {
    CAPTURE(family);
    FixtureModel loaded = load_fixture(family);
    GPT& model = *loaded.model;
    model.eval();
    const Tensor ids = raw::narrow(loaded.fixture.at("inputs"), 0, 0, 1);  // (1, T)
    const int64_t time = ids.size(1);
    NoGradGuard no_grad;
    const Tensor full = model.forward(ids);  // (1, T, V)
    for (const bool fused : {true, false}) {
      CAPTURE(fused);
      model.set_fused_decode(fused);
      std::vector<nn::KVCache> caches = model.make_caches(1, time);
      // The first two tokens as a prompt (the general path), then one at a time.
      const Tensor prompt_logits = model.forward_cached(raw::narrow(ids, 1, 0, 2), caches);
      check_matches(prompt_logits, raw::narrow(full, 1, 0, 2), "prompt");
      for (int64_t t = 2; t < time; ++t) {
        CAPTURE(t);
        const Tensor step = model.forward_cached(raw::contiguous(raw::narrow(ids, 1, t, 1)), caches);  // (1, 1, V)
        check_matches(step, raw::narrow(full, 1, t, 1), "step");
      }
      CHECK(caches.front().keys.size(1) == model.config().kv_heads());  // the cache holds KV heads only
      CHECK(caches.front().keys.size(3) == model.config().head_size());
    }
    model.set_fused_decode(true);
  }
}

TEST_CASE("Llama-style GPT: the fused decode step equals the module-by-module step bit for bit") {
  for (const std::string& family : kFamilies) {
    CAPTURE(family);
    FixtureModel loaded = load_fixture(family);
    GPT& model = *loaded.model;
    model.eval();
    const std::vector<int64_t> tokens = raw::narrow(loaded.fixture.at("inputs"), 0, 0, 1).to_vector<int64_t>();
    std::vector<nn::KVCache> fused_caches = model.make_caches(1, 8), module_caches = model.make_caches(1, 8);
    for (int64_t t = 0; t < 8; ++t) {
      CAPTURE(t);
      const Tensor token = from_vector<int64_t>({tokens[t]}, {1, 1});
      const std::vector<float> fused = model.decode_step(token, fused_caches).to_vector<float>();
      model.set_fused_decode(false);
      const std::vector<float> modules = model.forward_cached(token, module_caches).to_vector<float>();
      model.set_fused_decode(true);
      CHECK(fused == modules);
    }
    CHECK(raw::narrow(fused_caches.back().keys, 2, 0, 8).to_vector<float>() ==
          raw::narrow(module_caches.back().keys, 2, 0, 8).to_vector<float>());
  }
}
