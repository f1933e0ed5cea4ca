// Fuzzes the reading of a prepared dataset's meta.json (datasets/token_dataset_meta.h),
// as open_prepared_dataset reads it: the text is parsed with the nesting limit of
// tensor/io/bounded_json.h, then TokenDatasetMeta::from_json checks every field. A bad
// file must be refused with tg::Error (or nlohmann's parse error, which the loader
// turns into one); a meta.json it accepts must write back (to_json) as a file that
// reads as the same description.
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "tinygpt/datasets/token_dataset_meta.h"
#include "tinygpt/tensor/io/bounded_json.h"
#include "tinygpt/tensor/error.h"
#include "tests/fuzz/property.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string where = "meta.json";
  tg::TokenDatasetMeta meta;
  try {
    nlohmann::json json;
    try {
      json = tg::parse_bounded_json(std::string_view(reinterpret_cast<const char*>(data), size), where);
    } catch (const nlohmann::json::exception&) {
      return 0;  // not JSON
    }
    meta = tg::TokenDatasetMeta::from_json(json, where);
  } catch (const tg::Error&) {
    return 0;  // a clean refusal, naming the field and what is wrong with it
  }
  const nlohmann::ordered_json written = meta.to_json();
  const tg::TokenDatasetMeta read_back = tg::TokenDatasetMeta::from_json(nlohmann::json::parse(written.dump()), where);
  tg::fuzz::check_property(read_back.to_json() == written, "the meta.json to_json writes reads back the same");
  return 0;
}
