// Shared helpers of the tokenizer tests: where the GPT-2 files are, loading
// them once per process, scratch directories, and reading files.
//
// Tests run from the project root; GPT-2's files are expected at
// ../shared/data/gpt2. When they are absent, the tests that need them say so
// and pass without checking anything (see GPT2_OR_SKIP).
#pragma once

#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <sstream>
#include <string>

#include "tinygpt/tokenizer/gpt2_tokenizer.h"

namespace tg::tokenizer::testing {

inline const std::filesystem::path gpt2_directory = "../shared/data/gpt2";
inline const std::filesystem::path shakespeare_path = "../shared/data/tinyshakespeare.txt";

inline bool have_gpt2_files() {
  return std::filesystem::exists(gpt2_directory / "encoder.json") &&
         std::filesystem::exists(gpt2_directory / "vocab.bpe");
}

// GPT-2's tokenizer, loaded on first use and shared by every test.
inline const Gpt2Tokenizer& gpt2() {
  static const Gpt2Tokenizer tokenizer = Gpt2Tokenizer::load(gpt2_directory);
  return tokenizer;
}

inline std::string read_file(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::ostringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

inline void write_file(const std::filesystem::path& path, std::string_view contents) {
  std::ofstream file(path, std::ios::binary);
  file << contents;
}

// Text made to trip up a cut between pre-tokens: runs of every kind of
// whitespace (ASCII, NBSP, U+0085, U+3000, "\r\n", tabs), words in several
// scripts, digits (ASCII, Arabic-Indic), contractions and lone apostrophes,
// symbols, emoji, "<|endoftext|>" and bytes that are not UTF-8 (stray
// continuation bytes, a lead byte without its continuation), in random order.
inline std::string adversarial_text(std::size_t fragments, unsigned seed = 1) {
  static const char* const kinds[] = {
      " ", "  ", "   ", "\n", "\n\n", "\n\n\n", "\t", "\r\n", " \n", "\n ", "\xC2\xA0", "\xC2\x85",
      "\xE3\x80\x80", "\xE2\x80\xA8", "word", "Word", "caf\xC3\xA9", "\xE4\xBD\xA0\xE5\xA5\xBD", "\xD9\xA3\xD9\xA4",
      "42", "3.14", "'s", "'ll", "'re", "'ve", "'m", "'d", "'t", "'", "''", "don't", "'S", "!?", "...", "--",
      "\xF0\x9F\x98\x80", "<|endoftext|>", "\xFF", "\x80", "\xC3", "\xE2\x80", "a", "1", ".", "\xC3\xA9\n"};
  std::mt19937 random(seed);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kinds) - 1);
  std::string text;
  for (std::size_t i = 0; i < fragments; ++i) text += kinds[pick(random)];
  return text;
}

// A fresh, empty directory under the system's temporary directory, removed
// when the object goes out of scope.
class ScratchDirectory {
 public:
  explicit ScratchDirectory(const std::string& name) {
    std::random_device entropy;
    path_ = std::filesystem::temp_directory_path() /
            ("tinygpt-" + name + "-" + std::to_string(entropy()) + std::to_string(entropy()));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace tg::tokenizer::testing

// Ends the current test case, with a message, when GPT-2's files are absent.
#define GPT2_OR_SKIP()                                                                     \
  do {                                                                                     \
    if (!::tg::tokenizer::testing::have_gpt2_files()) {                                    \
      MESSAGE("skipped: GPT-2 files not found in ../shared/data/gpt2 (run from the root)"); \
      return;                                                                              \
    }                                                                                      \
  } while (false)
