// Fuzzes the reading of a stranger's LoRA adapter (models/lora_files.h), as
// `--lora DIR` reads it onto a model: the input is adapter_config.json, a NUL
// byte, then adapter_model.safetensors (either may be anything), written into a
// scratch directory and loaded onto a small model of the Llama family (2
// layers, grouped-query attention, SwiGLU; the Llama fixture's shapes). Every fault must be a tg::Error
// naming the file; an adapter that is accepted must have attached factors of
// the shapes the model's projections need, and merge into its weights.
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>

#include "tinygpt/models/gpt.h"
#include "tinygpt/models/lora_files.h"
#include "tinygpt/tensor/error.h"
#include "tests/fuzz/property.h"

namespace {

// The shapes of tests/fixtures/hf_llama/llama, whose adapter (tests/fixtures/lora/llama) is the seed.
tg::GPTConfig small_llama() {
  tg::GPTConfig config = tg::GPTConfig::preset_named("llama-small", 320);
  config.n_layer = 2;
  config.n_embd = 32;
  config.n_head = 4;
  config.n_kv_head = 2;
  config.mlp_hidden = 64;
  config.block_size = 8;
  return config;
}

void write(const std::filesystem::path& path, std::string_view bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::filesystem::path directory =
      std::filesystem::temp_directory_path() / ("tinygpt-fuzz-lora-" + std::to_string(::getpid()));
  static const bool made = std::filesystem::create_directories(directory) || std::filesystem::is_directory(directory);
  if (!made) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  write(directory / tg::kAdapterConfigFile, input.substr(0, split));
  write(directory / tg::kAdapterWeightsFile, split == std::string_view::npos ? "" : input.substr(split + 1));

  tg::GPT model(small_llama(), 0, tg::DType::Float32, /*initialize=*/false);
  try {
    tg::load_peft_adapter(directory.string(), model);
  } catch (const tg::Error&) {
    return 0;  // a clean refusal, naming the file and what does not fit
  }
  tg::fuzz::check_property(model.lora().has_value(), "an accepted adapter is attached");
  const int64_t rank = model.lora()->settings.rank;
  for (const auto& [name, parameter] : model.named_parameters()) {
    if (name.find(".lora.A") != std::string::npos)
      tg::fuzz::check_property(parameter.dim() == 2 && parameter.size(0) == rank, "every A is (r, in)");
    if (name.find(".lora.B") != std::string::npos)
      tg::fuzz::check_property(parameter.dim() == 2 && parameter.size(1) == rank, "every B is (out, r)");
  }
  model.merge_lora();
  tg::fuzz::check_property(!model.lora().has_value(), "a merged model has no adapters left");
  return 0;
}
