// Fuzzes the reading of a Hugging Face config.json (models/hf_gpt2.h), as
// load_hf_gpt2 reads it: the text is parsed with the nesting limit of
// tensor/io/bounded_json.h (whose syntax errors are nlohmann's exceptions, which
// load_hf_gpt2 turns into tg::Error), then hf_gpt2_config reads the sizes and
// checks the rest. A config it accepts must have a parameter count that is
// computed or refused (checked arithmetic: models are built from it), and the
// config.json that export writes for it must read back as the same config.
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tinygpt/models/hf_gpt2.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/error.h"
#include "tests/fuzz/property.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string where = "config.json";
  nlohmann::json json;
  tg::GPTConfig config;
  try {
    try {
      json = tg::parse_bounded_json(std::string_view(reinterpret_cast<const char*>(data), size), where);
    } catch (const nlohmann::json::exception&) {
      return 0;  // not JSON
    }
    config = tg::hf_gpt2_config(json, where);
  } catch (const tg::Error&) {
    return 0;  // a clean refusal, naming the key and what is wrong with it
  }

  try {
    config.parameter_count();
  } catch (const tg::Error&) {
    // Too many to count in int64: refused by name wherever a model would be built.
  }
  const tg::GPTConfig exported = tg::hf_gpt2_config(tg::hf_gpt2_config_json(config), where);
  tg::fuzz::check_property(exported.to_json() == config.to_json(),
                           "the config.json export writes reads back as the same config");
  return 0;
}
