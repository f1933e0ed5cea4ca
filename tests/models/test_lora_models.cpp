// LoRA on whole models: PEFT adapters against PyTorch (the fixtures of
// tests/reference/make_lora_fixtures.py on the hf_gpt2 and hf_llama/llama
// bases), merging, the PEFT files' round trip, targets and the refusals.
#include "tinygpt/models/lora_files.h"

#include <doctest/doctest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>

#include "tinygpt/autograd/backward.h"
#include "tinygpt/autograd/gradcheck.h"
#include "tinygpt/autograd/grad_mode.h"
#include "tinygpt/models/hf_directory.h"
#include "tinygpt/tensor/factory.h"
#include "tinygpt/tensor/io/safetensors.h"
#include "tinygpt/tensor/random.h"
#include "tinygpt/tensor/view.h"
#include "tests/models/hf_directory_support.h"

using namespace tg;
namespace fs = std::filesystem;
using tg::testing::read_json;
using tg::testing::ScratchDirectory;
using tg::testing::write_text;

namespace {

struct Fixture {
  fs::path adapter;
  nlohmann::json expected;
  std::unique_ptr<GPT> base() const {
    std::unique_ptr<GPT> model = std::move(load_hf_model(expected["base"].get<std::string>()).model);
    model->eval();
    return model;
  }
};

Fixture fixture(const std::string& name) {
  const fs::path adapter = fs::path("tests/fixtures/lora") / name;
  return {adapter, read_json(adapter / "expected.json")};
}

// The inputs ids[:-1] and targets ids[1:] of a fixture, (1, T) each.
std::pair<Tensor, Tensor> inputs_targets(const nlohmann::json& expected) {
  const std::vector<int64_t> ids = expected["ids"].get<std::vector<int64_t>>();
  const int64_t time = static_cast<int64_t>(ids.size()) - 1;
  return {from_vector<int64_t>(std::vector<int64_t>(ids.begin(), ids.end() - 1), {1, time}),
          from_vector<int64_t>(std::vector<int64_t>(ids.begin() + 1, ids.end()), {1, time})};
}

double loss_of(GPT& model, const nlohmann::json& expected) {
  NoGradGuard no_grad;
  const auto [inputs, targets] = inputs_targets(expected);
  return model.loss(inputs, targets).item<double>();
}

std::vector<float> logits_of(GPT& model, const nlohmann::json& expected) {
  NoGradGuard no_grad;
  return model.forward(inputs_targets(expected).first).to_vector<float>();
}

// max |a - b| / max |a|
double relative_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double largest = 0, difference = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    largest = std::max(largest, std::abs(static_cast<double>(a[i])));
    difference = std::max(difference, std::abs(static_cast<double>(a[i]) - b[i]));
  }
  return difference / largest;
}

GPTConfig small_config(bool llama) {
  GPTConfig config = GPTConfig::preset_named(llama ? "llama-small" : "cpu-small", 40);
  config.n_layer = 2;
  config.n_embd = 32;
  config.n_head = 4;
  if (llama) config.n_kv_head = 2;
  config.block_size = 16;
  return config;
}

}  // namespace

TEST_CASE("a PEFT adapter gives PyTorch's loss and logits on the GPT-2 and Llama fixtures") {
  for (const char* name : {"gpt2", "llama"}) {
    CAPTURE(name);
    const Fixture lora = fixture(name);
    std::unique_ptr<GPT> model = lora.base();
    CHECK(loss_of(*model, lora.expected) == doctest::Approx(lora.expected["loss_base"].get<double>()).epsilon(1e-5));
    const LoraConfig config = load_peft_adapter(lora.adapter.string(), *model);
    CHECK(config.settings.rank == lora.expected["r"].get<int64_t>());
    CHECK(config.settings.alpha == lora.expected["lora_alpha"].get<double>());
    const double loss = loss_of(*model, lora.expected);
    CHECK(loss == doctest::Approx(lora.expected["loss"].get<double>()).epsilon(1e-5));
    CHECK(std::abs(loss - lora.expected["loss_base"].get<double>()) > 1e-3);  // the adapter does change it

    const std::vector<float> logits = logits_of(*model, lora.expected);
    const int64_t vocab = model->config().vocab_size, position = lora.expected["logits_position"].get<int64_t>();
    const auto columns = lora.expected["logit_columns"].get<std::vector<int64_t>>();
    const auto want = lora.expected["logits_with_adapter"].get<std::vector<double>>();
    for (size_t i = 0; i < columns.size(); ++i)
      CHECK(logits[position * vocab + columns[i]] == doctest::Approx(want[i]).epsilon(1e-4).scale(1.0));
  }
}

TEST_CASE("merging an adapter into the weights gives the logits of the adapter applied at run time") {
  for (const char* name : {"gpt2", "llama"}) {
    CAPTURE(name);
    const Fixture lora = fixture(name);
    std::unique_ptr<GPT> model = lora.base();
    load_peft_adapter(lora.adapter.string(), *model);
    const std::vector<float> applied = logits_of(*model, lora.expected);
    model->merge_lora();
    CHECK_FALSE(model->lora().has_value());
    for (const auto& [parameter, value] : model->named_parameters()) CHECK(parameter.find(".lora.") == std::string::npos);
    const double difference = relative_difference(applied, logits_of(*model, lora.expected));
    MESSAGE(std::string(name), ": merged vs applied, max |difference| / max |logit| = ", difference);
    // float32 rounding of two summation orders: 7.6e-7 (GPT-2), 1.0e-6 (Llama, whose tiny head makes
    // its logits small beside the activations; PyTorch's own merged forward differs by 3.1e-6 there).
    CHECK(difference < 2e-6);
  }
}

TEST_CASE("an adapter saved in PEFT's layout reads back to the same logits, with PEFT's fields") {
  for (const char* name : {"gpt2", "llama"}) {
    CAPTURE(name);
    const Fixture lora = fixture(name);
    std::unique_ptr<GPT> model = lora.base();
    load_peft_adapter(lora.adapter.string(), *model);
    const ScratchDirectory scratch("tinygpt_lora_");
    save_peft_adapter(*model, scratch.path.string(), "the base");
    CHECK(is_peft_adapter_directory(scratch.path.string()));

    const nlohmann::json written = read_json(scratch.path / kAdapterConfigFile);
    const nlohmann::json original = read_json(lora.adapter / kAdapterConfigFile);
    CHECK(written["peft_type"] == "LORA");
    CHECK(written["r"] == original["r"]);
    CHECK(written["lora_alpha"].get<double>() == original["lora_alpha"].get<double>());
    CHECK(written["fan_in_fan_out"] == original["fan_in_fan_out"]);
    CHECK(written["base_model_name_or_path"] == "the base");
    std::vector<std::string> written_modules = written["target_modules"], original_modules = original["target_modules"];
    std::sort(written_modules.begin(), written_modules.end());
    std::sort(original_modules.begin(), original_modules.end());
    if (std::string(name) == "llama") CHECK(written_modules == original_modules);

    const SafetensorsFile mine = load_safetensors((scratch.path / kAdapterWeightsFile).string());
    const SafetensorsFile theirs = load_safetensors((lora.adapter / kAdapterWeightsFile).string());
    CHECK(mine.tensors.size() == theirs.tensors.size());
    CHECK(mine.metadata.at("format") == "pt");

    std::unique_ptr<GPT> again = lora.base();
    load_peft_adapter(scratch.path.string(), *again);
    CHECK(logits_of(*again, lora.expected) == logits_of(*model, lora.expected));
  }
}

TEST_CASE("attach_lora: step 0 is the base bit for bit, only adapters train, targets are named per layout") {
  for (const bool llama : {false, true}) {
    CAPTURE(llama);
    const GPTConfig config = small_config(llama);
    GPT model(config, 7);
    Generator data(3);
    const Tensor ids = randint({2, 8}, 0, config.vocab_size, data), targets = randint({2, 8}, 0, config.vocab_size, data);
    const std::vector<float> before = model.loss(ids, targets).to_vector<float>();
    LoraConfig lora;
    lora.settings = {4, 8, 0};
    lora.targets = parse_lora_targets("all-linear", config, "--lora-targets");
    model.attach_lora(lora, 11);
    CHECK(model.loss(ids, targets).to_vector<float>() == before);

    int64_t trainable = 0, adapter_tensors = 0;
    for (const auto& [name, parameter] : model.named_parameters()) {
      const bool adapter = name.find(".lora.") != std::string::npos;
      CHECK(parameter.requires_grad() == adapter);
      adapter_tensors += adapter;
      if (adapter) trainable += parameter.numel();
    }
    // Per layer: qkv (q, k, v own blocks in Llama's layout, one in GPT-2's), o, c_fc (gate and up), down.
    CHECK(adapter_tensors == config.n_layer * 2 * (llama ? 7 : 4));
    backward(model.loss(ids, targets));
    for (const auto& [name, parameter] : model.named_parameters())
      CHECK(parameter.grad().defined() == (name.find(".lora.") != std::string::npos));
    CHECK(trainable > 0);
  }
}

TEST_CASE("LoRA targets: Hugging Face and GPT-2 names, and what a layout cannot adapt") {
  const GPTConfig gpt2 = small_config(false), llama = small_config(true);
  using Targets = std::vector<std::string>;
  CHECK(parse_lora_targets("q_proj, v_proj", llama, "--lora-targets") == Targets{"q", "v"});
  CHECK(parse_lora_targets("all-linear", llama, "--lora-targets") == Targets{"q", "k", "v", "o", "gate", "up", "down"});
  CHECK(parse_lora_targets("c_attn,c_fc", gpt2, "--lora-targets") == Targets{"q", "k", "v", "up"});
  CHECK(parse_lora_targets("c_proj", gpt2, "--lora-targets") == Targets{"o", "down"});
  CHECK(parse_lora_targets("mlp", llama, "--lora-targets") == Targets{"gate", "up", "down"});
  CHECK_THROWS_WITH(parse_lora_targets("q,v", gpt2, "--lora-targets"),
                    doctest::Contains("c_attn computes q, k and v in one projection"));
  CHECK_THROWS_WITH(parse_lora_targets("gate", gpt2, "--lora-targets"), doctest::Contains("no gate projection"));
  CHECK_THROWS_WITH(parse_lora_targets("lm_head", llama, "--lora-targets"),
                    doctest::Contains("'lm_head' is not a projection"));
  CHECK_THROWS_WITH(parse_lora_targets(" , ", llama, "--lora-targets"), doctest::Contains("names no projection"));
  CHECK(peft_target_modules(gpt2, {"o", "up"}) == Targets{"attn.c_proj", "c_fc"});
}

TEST_CASE("an adapter tinygpt does not apply as written is refused by name") {
  const Fixture lora = fixture("llama");
  auto refused = [&](const std::function<void(const fs::path&)>& edit, const std::string& what) {
    const ScratchDirectory scratch("tinygpt_lora_");
    fs::copy(lora.adapter / kAdapterConfigFile, scratch.path / kAdapterConfigFile);
    fs::copy(lora.adapter / kAdapterWeightsFile, scratch.path / kAdapterWeightsFile);
    edit(scratch.path);
    std::unique_ptr<GPT> model = lora.base();
    CHECK_THROWS_WITH(load_peft_adapter(scratch.path.string(), *model), doctest::Contains(what.c_str()));
    CHECK_FALSE(model->lora().has_value());  // refused before any adapter is attached (or allocated)
  };
  auto with_config = [&](const std::function<void(nlohmann::json&)>& change) {
    return [&, change](const fs::path& directory) {
      nlohmann::json config = read_json(directory / kAdapterConfigFile);
      change(config);
      write_text(directory / kAdapterConfigFile, config.dump());
    };
  };
  refused(with_config([](nlohmann::json& c) { c["use_rslora"] = true; }), "use_rslora");
  refused(with_config([](nlohmann::json& c) { c["use_dora"] = true; }), "DoRA");
  refused(with_config([](nlohmann::json& c) { c["rank_pattern"] = {{"q_proj", 8}}; }), "rank_pattern");
  refused(with_config([](nlohmann::json& c) { c["target_modules"] = ".*proj"; }), "regular expression");
  refused(with_config([](nlohmann::json& c) { c["target_modules"].push_back("k_proj"); }), "k_proj.lora_A.weight");
  refused(with_config([](nlohmann::json& c) { c["r"] = 8; }), "expected (8, 32)");
  refused(with_config([](nlohmann::json& c) { c["r"] = 65536; }), "expected (65536, 32)");
  refused(with_config([](nlohmann::json& c) { c["target_modules"] = {"q_proj"}; }), "adapts no module");
  refused([](const fs::path& directory) { write_text(directory / kAdapterConfigFile, "{\"r\": "); }, "not valid JSON");
  refused([](const fs::path& directory) { fs::remove(directory / kAdapterWeightsFile); }, "no adapter_model.safetensors");
  // Only r, lora_alpha and target_modules are needed (fuzz_lora_adapter found the config without peft_type
  // read a missing key while building a message).
  {
    const ScratchDirectory scratch("tinygpt_lora_");
    nlohmann::json config = read_json(lora.adapter / kAdapterConfigFile);
    nlohmann::json minimal = {{"r", config["r"]}, {"lora_alpha", config["lora_alpha"]},
                              {"target_modules", config["target_modules"]}};
    write_text(scratch.path / kAdapterConfigFile, minimal.dump());
    fs::copy(lora.adapter / kAdapterWeightsFile, scratch.path / kAdapterWeightsFile);
    std::unique_ptr<GPT> model = lora.base();
    CHECK(load_peft_adapter(scratch.path.string(), *model).settings.rank == config["r"].get<int64_t>());
  }
  refused(with_config([](nlohmann::json& c) { c["bias"] = "all"; }), "trains biases too");
  refused(with_config([](nlohmann::json& c) { c["peft_type"] = "IA3"; }), "tinygpt applies LORA adapters");
  // The GPT-2 fixture's adapter on the Llama base: other module names.
  std::unique_ptr<GPT> model = lora.base();
  CHECK_THROWS_WITH(load_peft_adapter(fixture("gpt2").adapter.string(), *model), doctest::Contains("c_attn"));
}

TEST_CASE("gradcheck (float64): a whole GPT's loss with respect to its adapters, in both layouts") {
  for (const bool llama : {false, true}) {
    CAPTURE(llama);
    GPTConfig config = small_config(llama);
    config.n_layer = 1;
    config.n_embd = 8;
    config.n_head = 2;
    if (llama) config.n_kv_head = 1;
    config.vocab_size = 7;
    config.block_size = 4;
    GPT model(config, 11, DType::Float64);
    LoraConfig lora;
    lora.settings = {2, 4, 0};
    lora.targets = parse_lora_targets(llama ? "q,v,o,gate,down" : "all-linear", config, "--lora-targets");
    model.attach_lora(lora, 12);
    std::vector<Tensor> adapters;
    for (const auto& [name, parameter] : model.named_parameters()) {
      if (name.find(".lora.") == std::string::npos) continue;
      // B starts at zero; a random B makes A's gradient nonzero too.
      if (name.find(".lora.B") != std::string::npos) {
        Generator generator(adapters.size() + 1);
        raw::copy_(parameter, uniform(parameter.shape(), -0.5, 0.5, generator, DType::Float64));
      }
      adapters.push_back(parameter);
    }
    Generator data(5);
    const Tensor ids = randint({2, 4}, 0, 7, data), targets = randint({2, 4}, 0, 7, data);
    const GradcheckResult result = gradcheck([&](const std::vector<Tensor>&) { return model.loss(ids, targets); }, adapters);
    INFO(result.report);
    CHECK(result.ok);
  }
}
