// JSON from files through parse_bounded_json (tensor/io/bounded_json.h): a safetensors
// header of N tensors, as a real model's, and a config of N empty objects. The time
// per tensor must not grow with N (it did: the parser callback was quadratic, which
// BM_SafetensorsHeaderThroughCallback still shows).
//
//   build/release/bench/bench_json
#include <benchmark/benchmark.h>

#include <string>

#include "tinygpt/tensor/io/bounded_json.h"

namespace {

std::string safetensors_header(int64_t tensors) {
  std::string text = "{\"__metadata__\":{\"format\":\"pt\"}";
  for (int64_t i = 0; i < tensors; ++i)
    text += ",\"h." + std::to_string(i) + ".attn.c_attn.weight\":{\"dtype\":\"F32\",\"shape\":[768,2304],"
            "\"data_offsets\":[" + std::to_string(i * 4) + "," + std::to_string(i * 4 + 4) + "]}";
  return text + "}";
}

std::string empty_objects(int64_t count) {
  std::string text = "[";
  for (int64_t i = 0; i < count; ++i) text += i ? ",{}" : "{}";
  return text + "]";
}

void report(benchmark::State& state, const std::string& text, int64_t items) {
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) * static_cast<int64_t>(text.size()));
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations()) * items);  // tensors (or objects) per second
}

void BM_SafetensorsHeader(benchmark::State& state) {
  const std::string text = safetensors_header(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(tg::parse_bounded_json(text, "header"));
  report(state, text, state.range(0));
}
BENCHMARK(BM_SafetensorsHeader)->Arg(1'000)->Arg(10'000)->Arg(40'000)->Arg(80'000)->Unit(benchmark::kMillisecond);

// The parse as it was: nlohmann's callback parser counting the depth, for the figure before.
void BM_SafetensorsHeaderThroughCallback(benchmark::State& state) {
  const std::string text = safetensors_header(state.range(0));
  const nlohmann::json::parser_callback_t depth_only = [](int, nlohmann::json::parse_event_t, nlohmann::json&) {
    return true;
  };
  for (auto _ : state) benchmark::DoNotOptimize(nlohmann::json::parse(text, depth_only));
  report(state, text, state.range(0));
}
BENCHMARK(BM_SafetensorsHeaderThroughCallback)->Arg(1'000)->Arg(10'000)->Arg(20'000)->Unit(benchmark::kMillisecond);

void BM_EmptyObjects(benchmark::State& state) {
  const std::string text = empty_objects(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(tg::parse_bounded_json(text, "config"));
  report(state, text, state.range(0));
}
BENCHMARK(BM_EmptyObjects)->Arg(10'000)->Arg(200'000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
