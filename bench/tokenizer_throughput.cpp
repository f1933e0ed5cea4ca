// Our side of bench/tokenizer_vs_tiktoken.sh: encode one file with GPT-2's
// tokenizer, or a Hugging Face tokenizer.json, and print MB/s. The method
// matches tokenizer_tiktoken_throughput.cjs and tokenizer_hf_throughput.cjs:
// load, one untimed warm-up encode, then REPEATS timed encodes of the whole
// file; the median is reported. One thread.
//
// Usage: tokenizer_throughput DIR FILE [REPEATS]
// DIR holds GPT-2's encoder.json and vocab.bpe, or a tokenizer.json (encoded
// without the post-processor's special tokens, as the Rust side is).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "tinygpt/tokenizer/gpt2_tokenizer.h"
#include "tinygpt/tokenizer/hf_tokenizer.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s DIR FILE [REPEATS]\n", argv[0]);
    return 2;
  }
  const int repeats = argc > 3 ? std::max(1, std::atoi(argv[3])) : 5;
  try {
    std::function<std::size_t(const std::string&)> encode;  // the number of tokens
    if (tg::tokenizer::has_hf_tokenizer(argv[1])) {
      encode = [tokenizer = tg::tokenizer::HfTokenizer::load(argv[1])](const std::string& text) {
        return tokenizer.encode(text, false).size();
      };
    } else {
      encode = [tokenizer = tg::tokenizer::Gpt2Tokenizer::load(argv[1])](const std::string& text) {
        return tokenizer.encode(text).size();
      };
    }
    std::ifstream file(argv[2], std::ios::binary);
    if (!file) throw std::runtime_error(std::string("cannot open ") + argv[2]);
    std::ostringstream contents;
    contents << file.rdbuf();
    const std::string text = contents.str();

    std::size_t tokens = encode(text);  // warm-up, not timed
    std::vector<double> seconds;
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      tokens = encode(text);
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
