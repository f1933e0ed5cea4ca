// Microbenchmarks of tokenizer/ (Google Benchmark). Each reports bytes/s:
//
//   BM_Gpt2Encode/shakespeare     the whole of tiny Shakespeare, GPT-2 tokens
//   BM_Gpt2Pretokenize            only the cutting into pieces, same text
//   BM_Gpt2EncodeOneLetter/N      N bytes of 'a': one long piece (heap merge);
//   BM_Gpt2EncodeRandomBytes/N    N random bytes; 256 KB and 1 MB of each show
//                                 that time grows linearly (n log n) in N
//   BM_MergeByScan/N, BM_MergeByHeap/N   the two merge algorithms on one piece
//                                 of N letters: where the quadratic scan loses
//   BM_BpeTrain1000Merges         training 1000 merges on tiny Shakespeare
//                                 (items/s = merges/s)
//   BM_BpeTrainOneLine/N          training on one line of N random letters (no
//                                 spaces: one word), until no pair repeats (the
//                                 merges grow with N); bytes/s stays nearly flat
//                                 from 32 KB to 2 MB when training is n log n
//
// Run from the project root (GPT-2's files are read from ../shared/data/gpt2):
//   build/bench/tokenizer_bench
// The side-by-side comparison with tiktoken is bench/tokenizer_vs_tiktoken.sh.
#include <benchmark/benchmark.h>

#include <fstream>
#include <random>
#include <sstream>

#include "tinygpt/tokenizer/bpe_merge.h"
#include "tinygpt/tokenizer/bpe_trainer.h"
#include "tinygpt/tokenizer/gpt2_pretokenizer.h"
#include "tinygpt/tokenizer/gpt2_tokenizer.h"

namespace {

using namespace tg::tokenizer;

std::string read_file(const char* path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

const Gpt2Tokenizer& gpt2() {
  static const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::load("../shared/data/gpt2");
  return tokenizer;
}

const std::string& shakespeare() {
  static const std::string text = read_file("../shared/data/tinyshakespeare.txt");
  return text;
}

void encode_benchmark(benchmark::State& state, const std::string& text) {
  std::size_t tokens = 0;
  for (auto _ : state) {
    const std::vector<TokenId> ids = gpt2().encode(text);
    tokens = ids.size();
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
  state.counters["tokens"] = static_cast<double>(tokens);
}

void BM_Gpt2Encode_shakespeare(benchmark::State& state) { encode_benchmark(state, shakespeare()); }
BENCHMARK(BM_Gpt2Encode_shakespeare)->Unit(benchmark::kMillisecond);

void BM_Gpt2Pretokenize(benchmark::State& state) {
  const std::string& text = shakespeare();
  for (auto _ : state) {
    std::size_t pieces = 0;
    Gpt2PieceScanner scanner(text);
    while (!scanner.next().empty()) ++pieces;
    benchmark::DoNotOptimize(pieces);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_Gpt2Pretokenize)->Unit(benchmark::kMillisecond);

void BM_Gpt2EncodeOneLetter(benchmark::State& state) {
  encode_benchmark(state, std::string(static_cast<std::size_t>(state.range(0)), 'a'));
}
BENCHMARK(BM_Gpt2EncodeOneLetter)->Arg(256 << 10)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

void BM_Gpt2EncodeRandomBytes(benchmark::State& state) {
  std::mt19937 random(1);
  std::string text(static_cast<std::size_t>(state.range(0)), '\0');
  for (char& byte : text) byte = static_cast<char>(random() % 256);
  encode_benchmark(state, text);
}
BENCHMARK(BM_Gpt2EncodeRandomBytes)->Arg(256 << 10)->Arg(1 << 20)->Unit(benchmark::kMillisecond);

template <void (*merge)(const BpeVocabulary&, std::string_view, std::vector<TokenId>&)>
void merge_benchmark(benchmark::State& state) {
  std::mt19937 random(3);
  std::string piece(static_cast<std::size_t>(state.range(0)), 'a');
  for (char& letter : piece) letter = "etaoinshrdlu"[random() % 12];
  std::vector<TokenId> ids;
  for (auto _ : state) {
    ids.clear();
    merge(gpt2().vocabulary(), piece, ids);
    benchmark::DoNotOptimize(ids.data());
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * piece.size()));
}
BENCHMARK(merge_benchmark<merge_by_scan>)->Name("BM_MergeByScan")->RangeMultiplier(4)->Range(8, 2048);
BENCHMARK(merge_benchmark<merge_by_heap>)->Name("BM_MergeByHeap")->RangeMultiplier(4)->Range(8, 2048);

void BM_BpeTrain1000Merges(benchmark::State& state) {
  for (auto _ : state) {
    const BpeVocabulary vocabulary = train_bpe(shakespeare(), {.vocab_size = 257 + 1000});
    benchmark::DoNotOptimize(vocabulary.size());
  }
  state.SetItemsProcessed(state.iterations() * 1000);
}
BENCHMARK(BM_BpeTrain1000Merges)->Unit(benchmark::kMillisecond);

void BM_BpeTrainOneLine(benchmark::State& state) {
  std::mt19937 random(5);
  std::string line(static_cast<std::size_t>(state.range(0)), 'a');
  for (char& letter : line) letter = static_cast<char>('a' + random() % 26);
  std::size_t merges = 0;
  for (auto _ : state) merges = train_bpe(line, {.vocab_size = 200'000}).merges().size();
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.counters["merges"] = static_cast<double>(merges);
}
BENCHMARK(BM_BpeTrainOneLine)->RangeMultiplier(4)->Range(32 << 10, 2 << 20)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
