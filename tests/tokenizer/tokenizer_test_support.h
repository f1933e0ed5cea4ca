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
#include <random>
#include <sstream>
#include <string>

#include "tokenizer/gpt2_tokenizer.h"

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
