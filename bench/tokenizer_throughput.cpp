// Our side of bench/tokenizer_vs_tiktoken.sh: encode one file with GPT-2's
// tokenizer and print MB/s. The method matches tokenizer_tiktoken_throughput.cjs:
// load, one untimed warm-up encode, then REPEATS timed encodes of the whole
// file; the median is reported. One thread.
//
// Usage: tokenizer_throughput GPT2_DIR FILE [REPEATS]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/tokenizer/gpt2_tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s GPT2_DIR FILE [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  try {
    const auto tokenizer = tg::tokenizer::Gpt2Tokenizer::load(argv[1]);
    std::ifstream file(argv[2], std::ios::binary);
    if (!file) throw std::runtime_error(std::string("cannot open ") + argv[2]);
    std::ostringstream contents;
    contents << file.rdbuf();
    const std::string text = contents.str();

    std::size_t tokens = tokenizer.encode(text).size();  // warm-up, not timed
    std::vector<double> seconds;
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      tokens = tokenizer.encode(text).size();
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("tinygpt %.3f MB/s %zu tokens %zu bytes\n", text.size() / 1e6 / median, tokens, text.size());
  } catch (const std::exception& error) {
    std::fprintf(stderr, "tokenizer_throughput: error: %s\n", error.what());
    return 1;
  }
  return 0;
}
